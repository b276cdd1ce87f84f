#!/bin/sh
# embed.sh SYMBOL FILE: write to stdout a C source holding FILE's bytes as
#
#   const unsigned char SYMBOL[];	the bytes, then a NUL
#   const size_t SYMBOL_len;		their number (without the NUL)
#
# The Makefile builds the rule catalogue into the binary with it
# ($(B)/gen/rules_catalogue_builtin.c from collectors/logwatch/rules/esxi.yaml;
# collectors/logwatch/rules_catalogue.h).  POSIX sh and od only, so every
# build (make, SANITIZE=1, fuzz, the static ESXi one) can run it.
set -eu

[ $# -eq 2 ] || { echo "usage: embed.sh SYMBOL FILE" >&2; exit 2; }
sym=$1
in=$2
[ -r "$in" ] || { echo "embed.sh: cannot read $in" >&2; exit 1; }

printf '/* Generated from %s by packaging/embed.sh: do not edit. */\n' "$in"
printf '#include <stddef.h>\n\n'
printf 'extern const unsigned char %s[];\n' "$sym"
printf 'extern const size_t %s_len;\n\n' "$sym"
printf 'const unsigned char %s[] = {\n' "$sym"
od -An -v -tx1 "$in" | sed -e 's/[[:space:]]*\([0-9a-f][0-9a-f]\)/0x\1,/g' -e 's/^/\t/'
printf '\t0x00\n};\n'
printf 'const size_t %s_len = sizeof(%s) - 1;\n' "$sym" "$sym"
