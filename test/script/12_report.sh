#!/usr/bin/env bash
# dp_report's page renders in headless Chromium (Debian's chromium): the screenshot is not blank
# and shows the panels (the DOM has them by id; the heat map's reds and the histograms' blue and
# orange bars are on the picture).  The page is written to tmp_report/ for a look.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
DB=dpsynth_report
OUT=$TOP/tmp_report
rm -rf "$OUT" && mkdir -p "$OUT" && chmod 777 "$OUT"
if ! command -v chromium >/dev/null; then
	echo "not ok 1 - chromium is not installed (scripts/test installs it: TEST_PACKAGES)"
	echo "1..1"
	exit 1
fi
fresh_db $DB
dp_load_adult $DB
dp_protect_adult $DB 10
q $DB "SELECT rows_written FROM dp_synthesize('adult', epsilon => 1)" >/dev/null
# the holdout: Adult's test rows (../shared), else a fifth of the training rows (then the copy and
# distance references describe rows that were used, which the page cannot know)
psql -X -q -d $DB -c "CREATE TABLE adult_test AS SELECT * FROM adult WHERE false"
if [ -f "$TOP/../shared/datasets/adult/adult_test.csv" ]; then
	psql -X -q -d $DB -c "\\copy adult_test FROM '$TOP/../shared/datasets/adult/adult_test.csv' WITH (FORMAT csv, HEADER true, NULL '?')"
else
	psql -X -q -d $DB -c "INSERT INTO adult_test SELECT * FROM adult TABLESAMPLE BERNOULLI (20) REPEATABLE (1)"
fi
q $DB "SELECT dp_report('adult', 'adult_synthetic', 'adult_test', 'income')" 2>/dev/null >"$OUT/report.html"
ok "$(grep -q '</html>' "$OUT/report.html"; echo $?)" "dp_report wrote a page ($(wc -c <"$OUT/report.html") bytes)"

chrome() {
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$OUT/profile" \
		--window-size=1400,2600 "$@" "file://$OUT/report.html" 2>/dev/null
}
chrome --dump-dom >"$OUT/dom.html"
for id in headline privacy heatmap histograms hist-0 hist-14; do
	ok "$(grep -q "id=\"$id\"" "$OUT/dom.html"; echo $?)" "the rendered DOM has panel #$id"
done
is "$(grep -o 'class="hist"' "$OUT/dom.html" | wc -l)" 15 "one histogram per column of Adult"
(cd "$OUT" && chrome --screenshot="$OUT/report.png") >/dev/null
ok "$([ -s "$OUT/report.png" ]; echo $?)" "Chromium took a screenshot"
# whole page; then the band of the heat map and the band of the first histograms
png=$(/usr/bin/python3 "$TOP/test/script/png_check.py" "$OUT/report.png")
read -r w h ink blue orange red <<<"$png"
echo "# screenshot ${w}x$h: $ink of the pixels inked, $blue blue, $orange orange, $red red (sampled every 2 px)"
ok "$(/usr/bin/python3 -c "import sys; sys.exit(0 if 0.02 < $ink < 0.9 else 1)"; echo $?)" "the screenshot is not blank (inked fraction $ink)"
ok "$([ "$red" -gt 200 ]; echo $?)" "the heat map's reds are on the picture ($red pixels)"
ok "$([ "$blue" -gt 200 ] && [ "$orange" -gt 200 ]; echo $?)" "real (blue) and synthetic (orange) bars are on the picture ($blue, $orange pixels)"
psql -X -q -d postgres -c "DROP DATABASE $DB"
echo "# the page and its screenshot: $OUT/report.html, $OUT/report.png"
done_testing
