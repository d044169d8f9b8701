// The command line's tables (tracer/cli/cli.c, modes.c) as text, for the test that holds the
// help, the manual page, bash completion and the tracer's refusals to them (options_agree.sh):
//     option --format text|json|html     every option, in the order of the help
//     option --heatmap
//     refuse --diff --save               a mode given with an option it does not take
//     refuse --diff --format html        ... or with a --format value it does not take
//     needs --golden --check             an option given without the one it needs
#include <stdio.h>

#include "cli.h"
#include "modes.h"

int main(void) {
    static const char *const formats[] = {[OUTPUT_TEXT] = "text", [OUTPUT_JSON] = "json", [OUTPUT_HTML] = "html"};
    for (size_t o = 0; o < CLI_OPTION_COUNT; o++)
        printf("option %s%s%s\n", cli_options[o].name, cli_options[o].value ? " " : "",
               cli_options[o].value ? cli_options[o].value : "");
    for (size_t m = 0; m < modes_count; m++) {
        const CliMode *mode = &modes[m];
        if (mode->option == CLI_NO_OPTION)
            continue;
        for (size_t o = 0; o < CLI_OPTION_COUNT; o++) {
            if (cli_options[o].now)  // --help and --version end the reading at once
                continue;
            for (size_t f = 0; f < (o == CLI_FORMAT ? ARRAY_LEN(formats) : 1); f++)
                if (!cli_mode_takes(mode, (CliOption)o, (OutputFormat)f))
                    printf("refuse %s %s%s%s\n", cli_options[mode->option].name, cli_options[o].name,
                           o == CLI_FORMAT ? " " : "", o == CLI_FORMAT ? formats[f] : "");
        }
    }
    for (size_t o = 0; o < CLI_OPTION_COUNT; o++)
        for (size_t n = 0; n < CLI_OPTION_COUNT; n++)
            if (cli_options[o].needs & CLI_BIT(n))
                printf("needs %s %s\n", cli_options[o].name, cli_options[n].name);
    return ferror(stdout) ? 1 : 0;
}
