#!/usr/bin/env bash
# The engine's layers are enforced by the compiler, not by convention: a file that uses a name of
# a higher layer, imports a higher module, or reaches a name a lower module keeps internal does
# not compile. Each case adds one probe file to a module's own sources and type-checks the module
# as CMakeLists.txt compiles it (its module search path, -package-name); the case passes only if
# the compile fails with the expected diagnostic, in the probe and nowhere else.
#
#   check_layers.sh SWIFTC SOURCE BASE_INCLUDES CORE_INCLUDES STEPKIT_INCLUDES
#
# The *_INCLUDES are the include directories of the CMake targets stepkit_base, stepkit_core and
# stepkit, joined by ':' (module maps and the directories of the modules each may import).
set -u
swiftc=$1 source=$2
declare -A includes=([StepKitBase]=$3 [StepKitCore]=$4 [StepKit]=$5)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# probe NAME MODULE EXPECTED... (the probe's text on standard input): each EXPECTED is a
# diagnostic the probe must draw.
probe() {
    local name=$1 module=$2
    shift 2
    local file="$work/$name/LayerProbe.swift"
    mkdir -p "$work/$name"
    cat >"$file"
    local flags=() dir
    IFS=: read -ra dirs <<<"${includes[$module]}"
    for dir in "${dirs[@]}"; do [ -n "$dir" ] && flags+=(-I "$dir"); done
    local sources
    mapfile -t sources < <(find "$source/Sources/$module" -name '*.swift' | sort)
    "$swiftc" -typecheck -swift-version 6 -package-name StepKit -parse-as-library -module-name "$module" \
        "${flags[@]}" "${sources[@]}" "$file" >"$work/$name.log" 2>&1
    local status=$? problem=""
    if [ $status -eq 0 ]; then
        problem="compiled, but must not"
    elif grep -E "^[^ ]+: error:" "$work/$name.log" | grep -vq "^$file:"; then
        problem="failed elsewhere than in the probe"
    else
        local expected
        for expected in "$@"; do
            grep -qF "$file:" "$work/$name.log" && grep -F "$file:" "$work/$name.log" | grep -qF "error: $expected" \
                || problem="did not report \"$expected\""
        done
    fi
    if [ -n "$problem" ]; then
        echo "FAIL $name ($module): $problem" >&2
        sed 's/^/    /' "$work/$name.log" | head -40 >&2
        failed=$((failed + 1))
    else
        echo "ok   $name ($module): refused"
    fi
}

# StepKitBase knows nothing of the engine.
probe base-uses-core StepKitBase "cannot find type 'Session' in scope" <<'EOF'
func layerProbe(_ session: Session) {}
EOF
probe base-imports-core StepKitBase "no such module 'StepKitCore'" <<'EOF'
import StepKitCore
EOF

# StepKitCore knows nothing of the ABI, and only what StepKitBase gives it (`package`).
probe core-uses-abi StepKitCore "cannot find 'HandleRegistry' in scope" "cannot find 'VanishingNumber' in scope" <<'EOF'
import StepKitBase
func layerProbe() {
    _ = HandleRegistry.self
    _ = VanishingNumber.self
}
EOF
probe core-imports-abi StepKitCore "no such module 'StepKit'" <<'EOF'
import StepKit
EOF

# The ABI reaches only what the layers below give it.
probe abi-uses-internals StepKit "'Builder' is inaccessible due to 'internal' protection level" \
    "cannot find 'VanishingNumber' in scope" <<'EOF'
import StepKitBase
import StepKitCore
func layerProbe() {
    _ = TaskCompiler.Builder.self
    _ = VanishingNumber.self
}
EOF

if [ $failed -ne 0 ]; then
    echo "$failed layer probe(s) compiled or failed for another reason" >&2
    exit 1
fi
echo "every upward or internal use was refused by the compiler"
