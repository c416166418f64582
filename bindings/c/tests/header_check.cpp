// Compiled with -std=c++11 -Wall -Wextra -pedantic -Werror: the public header is clean C++ and
// declares its functions with C linkage.
#include "stepkit.h"

extern "C" {
static int64_t clock_now(void *) { return 0; }
}

int main()
{
    const char *(*version)() = stepkit_version;
    stepkit_clock_fn clock = clock_now;
    stepkit_task *task = nullptr;
    stepkit_session *session = nullptr;
    (void)clock;
    (void)task;
    (void)session;
    return version() != nullptr && STEPKIT_OK == 0 ? 0 : 1;
}
