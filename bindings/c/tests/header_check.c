/* Compiled with -std=c99 -Wall -Wextra -pedantic -Werror: the public header is clean C99. */
#include "stepkit.h"

int main(void)
{
    const char *(*version)(void) = stepkit_version;
    stepkit_clock_fn clock = 0;
    (void)clock;
    return version() != 0 && stepkit_version_number() == STEPKIT_VERSION_NUMBER ? 0 : 1;
}
