// Pieces of shell that a scanner written carelessly reads in quadratic time when one is repeated to
// fill a long command (an opener never closed, a placeholder followed into variables, a nested
// parser): the linear-time test in test/core/template.test.ts scans each at 100,000 characters, and
// test/bench/shell-scan.bench.ts prints what each costs.

export const hostileShellUnits: readonly string[] = [
  'a[ ', '$(( ', '"{{vars.n}}" ', "'", 'x=( [', 'case a in ', '[[ ', '<<EOF\n', '${a[', 'a=1 ', '{ ', '! ', 'x=( ',
  'declare $(', 'eval $({{vars.n}} ', 'sh | ', 'cat <<E | sh\n{{vars.n}}\n', '"$(', '`', 'a[1]$(', 'read $(', '[[ $(',
  'x$x=$x ', 'a=$a; ', 'a="{{vars.n}}" b=$a; ', 'read a <<< "$b"; b=$a; ', '${!a', '${a:', 'declare -i a b=$c; ', 'let $(let ', 'bash -c \'bash -c ', 'export a=$a; sh -c \'(( a )); ',
  'case "$n" in *[!0-9]*) exit;; esac; n=$n; ', 'while read a; do ', 'done <<< "$a"; ', '$(( a$(( a ',
];

/** `unit` repeated, then cut to exactly `length` characters. */
export function repeatToLength(unit: string, length: number): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}
