# Sourced by hardening/fuzz/run and hardening/fuzz/planted: the options a target is fuzzed with,
# in one place so that the planted-bug check runs the answers target exactly as the smoke and
# long runs do.

# libFuzzer's flags for target $1 (besides the corpus folders, the time and -artifact_prefix).
# answers: 1 KiB holds a hundred operations; with its starting points (fuzz_answers.c) an input
# need not be long to reach any step, and longer ones only cost executions.
# Leaks are hardening/valgrind's (LeakSanitizer is off, see fuzz_asan_options), so libFuzzer's
# own leak tracing of every malloc is off too (-detect_leaks=0).
fuzz_flags() {
    local max_len
    case "$1" in answers) max_len=1024 ;; clock) max_len=4096 ;; forged) max_len=256 ;; *) max_len=65536 ;; esac
    echo "-detect_leaks=0 -max_len=$max_len -timeout=30 -rss_limit_mb=4096"
}

# ASan's options while fuzzing target $1. Swift's runtime keeps caches alive at exit:
# LeakSanitizer would report them, so leaks are checked by hardening/valgrind instead.
# ASan keeps 2 frames of each allocation's stack instead of 30 (recording them was a tenth of
# the answers target's time): a crash input kept replays with the full stacks (the next run
# replays it first, with these options but malloc_context_size).
# answers: ASan's quarantine of freed memory is 32 MB instead of 256. An input allocates and
# frees far less than that (0.1-0.6 MB, the longest seed the most), so a use after free within
# an input, or a few inputs later, is still caught; the 256 MB ring made allocations touch cold
# pages (page faults were a tenth of the time of a replayed input, docs/reliability.md).
fuzz_asan_base="detect_leaks=0:allocator_may_return_null=1"
fuzz_asan_options() {
    local o="$fuzz_asan_base:malloc_context_size=2"
    [ "$1" = answers ] && o="$o:quarantine_size_mb=32"
    echo "$o"
}
