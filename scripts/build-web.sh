#!/usr/bin/env bash
# Builds the analysis board page (web/) into a folder that `kibitz serve`
# serves as static files: the page itself plus the files it needs from its
# npm packages, and the API reference page api.html (proto/openapi.yaml
# rendered by Redoc). Node is needed here only, never at run time.
#
#   scripts/build-web.sh <out-dir>
#
# `npm ci` runs only when web/node_modules does not match package-lock.json,
# so a second build works offline.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 <out-dir>" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
web="$root/web"
mkdir -p "$1"
out=$(cd "$1" && pwd)

# npm ci writes its own copy of the lock file into node_modules; when that
# copy equals the lock file, the installed tree is what the lock asks for.
stamp="$web/node_modules/.kibitz-lock.json"
if ! cmp -s "$web/package-lock.json" "$stamp"; then
  command -v npm >/dev/null || { echo "build-web: npm is needed to install web/ packages" >&2; exit 1; }
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$web/package-lock.json" "$stamp"
fi

# Build into a fresh folder beside the output and swap it in, so a running
# server never sees a half-copied page.
tmp="$out.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp/vendor/cm-chessboard/assets"
trap 'rm -rf "$tmp"' EXIT
cp -R "$web/index.html" "$web/css" "$web/js" "$web/img" "$tmp/"

# The board component: its ES modules as they are (the page imports them
# through an import map), its stylesheets and SVG sprites, its licence.
cb="$web/node_modules/cm-chessboard"
cp -R "$cb/src" "$tmp/vendor/cm-chessboard/"
(cd "$cb/assets" && find . \( -name '*.css' -o -name '*.svg' \) -print0 |
  while IFS= read -r -d '' f; do
    mkdir -p "$tmp/vendor/cm-chessboard/assets/$(dirname "$f")"
    cp "$f" "$tmp/vendor/cm-chessboard/assets/$f"
  done)
cp "$cb/LICENSE" "$tmp/vendor/cm-chessboard/"
# Documentation inside the package's source tree is not part of the page.
find "$tmp/vendor" -name '*.md' -delete

# The API reference page: proto/openapi.yaml rendered by Redoc at build time
# (@redocly/cli build-docs pre-renders the page and inlines the document).
# build-docs points the page at Redoc's script on a CDN; the page loads the
# same version's copy from vendor/redoc instead, so it needs no network
# (the script's one fetch, the Redocly logo beside its attribution link, is
# an empty image here). No telemetry, no update check.
redoc="$web/node_modules/redoc"
mkdir -p "$tmp/vendor/redoc"
sed 's#https://cdn\.redoc\.ly/redoc/logo-mini\.svg#data:image/svg+xml,%3Csvg xmlns=%27http://www.w3.org/2000/svg%27/%3E#' \
  "$redoc/bundles/redoc.standalone.js" >"$tmp/vendor/redoc/redoc.standalone.js"
cp "$redoc/bundles/redoc.standalone.js.LICENSE.txt" "$redoc/LICENSE" "$tmp/vendor/redoc/"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
  node "$web/node_modules/@redocly/cli/bin/cli.js" build-docs "$root/proto/openapi.yaml" \
  --output "$tmp/api.cdn.html" --title "Kibitz API reference" --disableGoogleFont >/dev/null
sed -E 's#https://cdn\.redocly\.com/redoc/v[0-9.]+/bundles/redoc\.standalone\.js#vendor/redoc/redoc.standalone.js#' \
  "$tmp/api.cdn.html" >"$tmp/api.html"
rm "$tmp/api.cdn.html"
if grep -Eq 'cdn\.redocly\.com|cdn\.redoc\.ly|fonts\.googleapis\.com' "$tmp/api.html" "$tmp/vendor/redoc/redoc.standalone.js"; then
  echo "build-web: api.html would load Redoc, its logo or fonts from the network" >&2
  exit 1
fi

rm -rf "$out.old"
mv "$out" "$out.old"
mv "$tmp" "$out"
rm -rf "$out.old"
trap - EXIT
echo "build-web: page built into $out ($(find "$out" -type f | wc -l) files)"
