#!/usr/bin/env bash
# The library's documented public API, one line per item and per method, from rustdoc's output
# (run `cargo doc --no-deps` first). `.ci/run` compares it with docs/public-api.txt, so the API grows
# only on purpose: regenerate with `scripts/public_api.sh > docs/public-api.txt` and review the diff.
# Items marked #[doc(hidden)] (test and bench support, not the API) are not listed.
set -euo pipefail
doc=${1:-target/doc/pcsim}
[ -f "$doc/all.html" ] || { echo "public_api.sh: $doc/all.html is missing: run cargo doc --no-deps first" >&2; exit 2; }
grep -o '<li><a href="[^"]*">[^<]*</a></li>' "$doc/all.html" |
    sed -E 's#<li><a href="([^"]*/)?([a-z]+)\.[A-Za-z0-9_]+\.html">([^<]*)</a></li>#\2 \1 \3#' |
    while read -r kind dir path; do
        echo "$kind $path"
        if [ "$kind" = struct ] || [ "$kind" = enum ] || [ "$kind" = trait ]; then
            name=${path##*::}
            # Inherent methods: the page's "Implementations" section, before the trait impls.
            perl -0ne 'print "$1\n" while /id="method\.([a-z_0-9]+)"/g' \
                <(perl -0pe 's/.*?id="implementations"//s or $_ = ""; s/id="(trait|synthetic|blanket)-implementations".*//s' \
                    "$doc/$dir$kind.$name.html") |
                sort -u | sed "s#^#method $path::#"
        fi
    done | LC_ALL=C sort
