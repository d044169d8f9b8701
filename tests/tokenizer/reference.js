// The npm package gpt-3-encoder's encode() on each text of a file (texts separated by NUL
// bytes): the ids of each on a line, as tests/tokenizer/encode prints them.
//     node reference.js NODE_MODULES_PARENT STRINGS
const path = require('path');
const fs = require('fs');
const { encode } = require(path.resolve(process.argv[2], 'node_modules', 'gpt-3-encoder'));
const texts = fs.readFileSync(process.argv[3], 'utf-8').split('\0');
texts.pop();  // after the last NUL
process.stdout.write(texts.map(t => encode(t).join(' ') + '\n').join(''));
