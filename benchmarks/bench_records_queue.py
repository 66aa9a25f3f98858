"""Records queue under a records database locked part of the time by another process.

Lookups' rows are enqueued at a steady rate while another process holds an exclusive lock on
the SQLite file ``--locked-share`` of every second; the script prints the most rows held, the
memory they took, rows written, rows dropped (queue full) and rows counted lost at exit (run in
a child process, so its exit handler runs for real).

    python benchmarks/bench_records_queue.py --seconds 60 --rate 300 --locked-share 0.6
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HOLDER = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
share = float(sys.argv[2])
while True:
    con.execute("BEGIN EXCLUSIVE"); time.sleep(share); con.execute("COMMIT")
    time.sleep(1 - share)
"""

CHILD = """
import json, resource, sys, time
from langchain_lookup_knowledge import LookupSettings
from langchain_lookup_knowledge.core.models import LookupResult
from langchain_lookup_knowledge.recording import RecordingNotDone, recorder_for
data, seconds, rate = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
recorder = recorder_for(LookupSettings(data_dir=data, record_retry_after_s=2))
recorder.max_waiting = int(sys.argv[4])
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
most, sent, refused = 0, 0, 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    result = LookupResult(query=f"q{sent}", found=False, evidence_status="no_evidence",
                          message="none")
    try:
        recorder.enqueue(result=result, details={"query_transform": {"query": f"q{sent}"}})
    except RecordingNotDone as exc:
        refused += exc.row == "dropped"
    sent += 1
    most = max(most, recorder.backlog)
    time.sleep(1 / rate)
rss = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
print(json.dumps({"sent": sent, "most_held": most, "held_at_end": recorder.backlog,
                  "dropped_queue_full": recorder.losses.total, "rss_growth_mib": round(rss, 1)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rate", type=float, default=300, help="rows enqueued per second")
    parser.add_argument("--locked-share", type=float, default=0.6)
    parser.add_argument("--max-waiting", type=int, default=10_000, help="the queue's bound")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        db = data / "invocations.sqlite3"
        import sqlite3

        sqlite3.connect(db).execute("PRAGMA journal_mode=WAL").close()
        holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(db), str(args.locked_share)])
        try:
            child = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    CHILD,
                    str(data),
                    str(args.seconds),
                    str(args.rate),
                    str(args.max_waiting),
                ],
                capture_output=True,
                text=True,
                timeout=args.seconds + 120,
            )
        finally:
            holder.kill()
            holder.wait()
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        con = sqlite3.connect(db, timeout=30)
        figures["written"] = con.execute("select count(*) from tool_invocation").fetchone()[0]
        lost = con.execute("select coalesce(sum(rows_lost), 0) from tool_invocation_loss")
        figures["loss_rows_persisted"] = lost.fetchone()[0]
        lost_file = data / "records_lost.jsonl"
        figures["loss_file_rows"] = (
            sum(json.loads(line)["rows_lost"] for line in lost_file.read_text().splitlines())
            if lost_file.exists()
            else 0
        )
        figures["exit_warnings"] = [
            line for line in child.stderr.splitlines() if "rows lost" in line or "dropped" in line
        ]
        figures["unaccounted"] = (
            figures["sent"]
            - figures["written"]
            - figures["loss_rows_persisted"]
            - figures["loss_file_rows"]
        )
        print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
