// replay_weights: runs fuzz_weights' inputs (every file of the folders named on the command
// line) without libFuzzer, so that every build, the sanitized one included, replays its seeds
// and findings.
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
    static uint8_t data[1 << 20];
    int n_inputs = 0;
    for (int i = 1; i < argc; i++) {
        DIR *dir = opendir(argv[i]);
        if (!dir) {
            perror(argv[i]);
            return 1;
        }
        for (struct dirent *e; (e = readdir(dir));) {
            if (e->d_name[0] == '.')
                continue;
            char path[4096];
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            FILE *f = fopen(path, "rb");
            if (!f) {
                perror(path);
                closedir(dir);
                return 1;
            }
            size_t n = fread(data, 1, sizeof(data), f);
            fclose(f);
            LLVMFuzzerTestOneInput(data, n);
            n_inputs++;
        }
        closedir(dir);
    }
    printf("%d inputs read without a fault\n", n_inputs);
    return n_inputs ? 0 : 1;
}
