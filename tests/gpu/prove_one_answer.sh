#!/usr/bin/env bash
# Issue 23 on the NVIDIA host (a driver, a GPU), from the repo root: one answer per question across commands.
#
#   OUT=$OUT tests/gpu/prove_one_answer.sh
#
# 1. `ortprov plan --json` and `ortprov doctor --json` for the same target (the torch venv's python, which holds
#    the CPU onnxruntime): doctor's plan line must be plan's verdict (the same onnxruntime-gpu build, ok=true);
# 2. every `ortprov apply|plan ...` command doctor's fixes suggest runs as written (apply with --dry-run added):
#    exit 0 (on a machine without a driver they carry --driver none; here they must not). The host is offline:
#    with WH=DIR (a wheelhouse, e.g. /root/wh of prove_apply_verdict.sh) apply's dry run reads it (--wheelhouse
#    DIR added), else pip cannot reach the index and the dry run exits 1 ("failed to lookup address");
# 3. `ortprov -q` prints the result only; `verify --timeout 99999999` is refused (exit 2), not exit 70.
# Nothing is installed. Logs: $OUT/one-answer-*.txt. About a minute (doctor runs one verify child).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:?set OUT}
# shellcheck source=tests/gpu/common.sh
. tests/gpu/common.sh
mkdir -p "$OUT"
checkout_python
O=(.venv/bin/python -m provisioner)
status=0
RUN_LOGS=$OUT/one-answer-

"${O[@]}" plan --json --python "$TORCH_PY" > "$OUT/one-answer-plan.json" 2> "$OUT/one-answer-plan.err"
echo "plan: exit $?"
"${O[@]}" doctor --json --python "$TORCH_PY" > "$OUT/one-answer-doctor.json" 2> "$OUT/one-answer-doctor.err"
echo "doctor: exit $?"
"$TORCH_PY" - "$OUT" <<'EOF' | tee "$OUT/one-answer-compare.txt"
import json, os, re, shlex, subprocess, sys
out = sys.argv[1]
plan = json.load(open(f"{out}/one-answer-plan.json"))
doctor = json.load(open(f"{out}/one-answer-doctor.json"))
line = doctor["plan"]
print("plan:", plan.get("package"), plan.get("ort_version"), "| error:", plan.get("error"))
print("doctor's plan line:", line)
same = (line["ok"] is True and plan.get("ort_version", "-") in (line.get("build") or "")) if "steps" in plan else (
    line["ok"] is False and plan["error"] in line["text"])
print("ONE ANSWER:", same)
fixes = [f["fix"] for f in doctor["findings"]]
ok = same
for fix in fixes:
    for match in re.finditer(r"ortprov (?:apply|plan) [^(`;]*?(?=  |\(|`|;|$)", fix):
        words = shlex.split(match.group(0).strip())
        if words[1] == "apply":
            words.append("--dry-run")
            if os.environ.get("WH"):  # offline host: the same command from a wheelhouse
                words += ["--wheelhouse", os.environ["WH"]]
        done = subprocess.run([".venv/bin/python", "-m", "provisioner", *words[1:]], capture_output=True, text=True)
        print(f"suggested: {' '.join(words)} -> exit {done.returncode}", "(has --driver none)" if "--driver" in words else "")
        for tail in (done.stderr.strip().splitlines() or [])[-4:]:
            print("   ", tail)
        ok = ok and done.returncode == 0 and "--driver" not in words
print("VERDICT:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
EOF
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
run quiet "${O[@]}" plan -q --python "$TORCH_PY"
run timeout-refused "${O[@]}" verify --timeout 99999999 --python "$TORCH_PY"
grep -q '^\[exit 2,' "$OUT/one-answer-timeout-refused.txt" || status=1
echo "prove_one_answer: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
