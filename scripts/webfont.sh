#!/usr/bin/env bash
# Writes internal/harness/webfont/shuang.woff2: the one glyph 双 (U+53CC) of Droid
# Sans Fallback (Apache License 2.0), with the font's name table (its
# copyright and licence) kept, as WOFF2. The pages embed it so that their
# title's 双 reads where no CJK font is installed.
#
# Needs Debian's fonts-droid-fallback, python3-fonttools and python3-brotli
# (apt-get install them; remove fonts-droid-fallback again afterwards to see
# the pages as a machine without a CJK font does). PYTHON names the python3
# they were installed for, if not the one on PATH (/usr/bin/python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
font=${FONT:-/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf}
"${PYTHON:-python3}" -m fontTools.subset "$font" --text=双 --flavor=woff2 --name-IDs='*' \
	--output-file=internal/harness/webfont/shuang.woff2
ls -l internal/harness/webfont/shuang.woff2
