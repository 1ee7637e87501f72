#!/usr/bin/env bash
# The pictures of the report page in docs/report.md: the page of a Flax
# BERT train step and of a PyTorch/XLA encoder train step (the latter
# written with its metadata, so each rewrite names its source line), each
# run through the default pipeline and shot by headless Chromium (the first
# screenful: the pass table and the first rewrite, before and after).
#   cargo build --release && scripts/report_screenshots.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${HLO_OPT_BIN:-target/release/hlo-opt}
browser=$(command -v chromium || command -v chromium-browser) ||
  { echo "report_screenshots.sh: needs chromium (apt-get install chromium)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
shot() {
  local name=$1 input=$2
  "$bin" "$input" --report-html "$tmp/$name.html" -o "$tmp/$name.hlo"
  "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --disable-background-networking --disable-component-update --hide-scrollbars \
    --user-data-dir="$tmp/profile" --window-size=1000,1400 \
    --screenshot="$PWD/docs/$name.png" "file://$tmp/$name.html" 2>/dev/null
  echo "docs/$name.png"
}
shot report-flax-bert-train tests/data/frontend/jax/flax_bert_train_f32.hlo
shot report-torch-encoder-train tests/data/frontend/debuginfo/torch_transformer_encoder_f32_train.hlo
