// stepkit.hpp compiles on its own (it includes what it uses), twice (include guard), cleanly
// under strict warnings: ctest header.cxx17.
#include <stepkit.hpp>
#include <stepkit.hpp>

int main() {
    return stepkit::version_number() == STEPKIT_VERSION_NUMBER ? 0 : 1;
}
