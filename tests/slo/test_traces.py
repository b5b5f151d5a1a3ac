"""StepFun and Titan fault traces → frames → engine, on hand-made traces and the real files."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import DATASETS

from gpuslo.errors import InputError, ParseError
from gpuslo.slo.engine import compute_week
from gpuslo.slo.sources import traces
from gpuslo.slo_spec import SloSpec

STEPFUN = DATASETS / "stepfun_infinitehbd" / "fault_trace.json"
TITAN = DATASETS / "titan" / "gc_full.csv"


def fault(node, days, kind, level="Hardware Failure", klass="GPU", desc="GPU xid Error"):
    return {"node_id": node, "event_time": days, "event_type": kind,
            "fault_type": {"Level": level, "Class": klass, "Desc": desc}}


def test_hand_made_stepfun_trace(tmp_path):
    # 3 servers × 2 GPUs, span 2024-03-30 + 2 days (the last event at 1.5 days rounds up):
    #   node a: Xid fault 0.25–0.75 days (node-wide: 2 GPUs × 12 h = 24 GPU-hours, node layer)
    #   node b: "Suspect Machine Offline" from 1.0 days, never ended (2 GPUs × 24 h, platform)
    #   node c never faults (filler name).
    records = [
        fault("a", 0.25, "fault_start"),
        fault("a", 0.75, "fault_end"),
        fault(
            "b",
            1.0,
            "fault_start",
            "Other Failure",
            "Training Task Troubleshooting",
            "Suspect Machine Offline",
        ),
        fault("a", 1.5, "fault_start", desc="GPU DBE(Double Bit ECC) > Threshold"),
        fault("a", 1.5, "fault_end", desc="GPU DBE(Double Bit ECC) > Threshold"),
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(records))
    frames = traces.load_trace(path, "stepfun", nodes=3, gpus_per_node=2)
    assert sorted(frames.inventory["node"].unique()) == ["a", "b", "stepfun-idle-000"]
    result = compute_week(frames, None, None, SloSpec())
    assert (
        result.start == traces.STEPFUN_EPOCH
        and result.end == traces.STEPFUN_EPOCH + pd.Timedelta(days=2)
    )
    assert result.provisioned_gpu_hours == 3 * 2 * 48
    assert result.lost_gpu_hours_by_layer == {
        "node": 2 * 12,
        "platform": 2 * 24,
        "training": 0,
        "observability": 0,
    }
    assert result.lost_gpu_hours_by_reason == {"xid_fatal": 24, "drained": 48}
    assert result.usable_gpu_hours == 6 * 48 - 24 - 48
    assert "goodput" in result.data_quality["cannot_fill"]
    assert result.interruption_basis == "faults"


def test_stepfun_mapping_table():
    assert traces.stepfun_reason("Hardware Failure", "GPU", "GPU Lost") == "fallen_off_bus"
    assert (
        traces.stepfun_reason("Hardware Failure", "Parameter Plane Cable", "Link Down")
        == "network_port_down"
    )
    assert (
        traces.stepfun_reason("Other Failure", "Unknown Error", "Unknown Error") == "probe_failed"
    )


def test_stepfun_errors(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps([fault("a", 0.1, "fault_start"), {"node_id": "b", "event_type": "fault_end"}])
    )
    with pytest.raises(ParseError, match=r"field 'event_time': record \[1\]: missing"):
        traces.load_trace(path, "stepfun")
    path.write_text(json.dumps([fault(f"n{i}", 0.1, "fault_start") for i in range(3)]))
    with pytest.raises(InputError, match="3 nodes but --nodes is 2"):
        traces.load_trace(path, "stepfun", nodes=2)
    with pytest.raises(InputError, match="cannot read"):
        traces.load_trace(tmp_path / "missing.json", "stepfun")


def test_stepfun_errors_name_the_field_that_is_bad(tmp_path):
    """A newcomer's trace errors all said `field 'event_type/event_time'`, whichever field was
    missing or bad (a `fault_type` that is a string, an unknown event type)."""
    path = tmp_path / "bad.json"
    good = fault("a", 0.1, "fault_start")
    for bad, said in (({**good, "event_time": "soon"}, "field 'event_time': record [1]: 'soon'"),
                      ({**good, "event_time": True}, "field 'event_time'"),
                      ({**good, "fault_type": "GPU"}, "field 'fault_type': record [1]: 'GPU' "
                                                      "is not an object"),
                      ({**good, "event_type": "boom"}, "field 'event_type': record [1]: 'boom'"),
                      ({k: v for k, v in good.items() if k != "node_id"},
                       "field 'node_id': record [1]: missing"),
                      ("text", "record [1]: not an object but str")):
        path.write_text(json.dumps([good, bad]))
        with pytest.raises(ParseError) as error:
            traces.load_trace(path, "stepfun")
        assert said in str(error.value), (bad, str(error.value))


def test_json_errors_give_line_and_column_and_say_cut_off(tmp_path):
    path = tmp_path / "trace.json"
    text = json.dumps([fault("a", 0.1, "fault_start"), fault("b", 0.2, "fault_end")], indent=2)
    path.write_text(text[: len(text) // 2])  # a download that stopped in the middle
    with pytest.raises(ParseError, match=r"trace\.json:\d+: not JSON at column \d+: .*"
                                         r"\(cut off\? the text ends mid-document\)$"):
        traces.load_trace(path, "stepfun")
    path.write_text('[\n  {"node_id": "a",, "x": 1}\n]\n')
    with pytest.raises(ParseError) as error:
        traces.load_trace(path, "stepfun")
    assert str(error.value) == f"{path}:2: not JSON at column 19: Expecting property name " \
                               "enclosed in double quotes"


def test_titan_csv_errors_give_their_line(tmp_path):
    path = tmp_path / "gc_full.csv"
    header = "SN,location,insert,remove,duration,out,event\n"
    row = "A,s1,2017-01-01 00:00:00,2017-01-11 00:00:00,864000,TRUE,DBE\n"
    extra = "A,s1,,2017-01-11 00:00:00,,,OTB\n"
    path.write_text(header + row + extra + row + "1,2,3,4,5,6,7,8,9\n")
    with pytest.raises(ParseError, match=r"gc_full\.csv:5: not CSV: Expected 7 fields"):
        traces.load_trace(path, "titan")
    # the bad time is on file line 5: after an extra-event row and a blank line, which the
    # line count must not lose
    path.write_text(header + extra + row + "\n"
                    + row.replace("2017-01-01 00:00:00", "soon"))
    with pytest.raises(ParseError, match=r"gc_full\.csv:5: field 'insert': not a timestamp"):
        traces.load_trace(path, "titan")
    path.write_bytes((header + row).encode() + "B,s\xe9,x\n".encode("latin-1"))
    with pytest.raises(ParseError, match=r"gc_full\.csv:3: not CSV: not UTF-8"):
        traces.load_trace(path, "titan")


def test_hand_made_titan_trace(tmp_path):
    # slot s1: GPU A 2017-01-01 → 01-11 ends in DBE (plus an extra OTB row for the same removal),
    #          GPU B from 01-21 to the end 01-31: ecc_uncorrectable 10 days (240 GPU-hours)
    # slot s2: GPU C 01-01 → 01-31 healthy.
    path = tmp_path / "gc_full.csv"
    path.write_text(
        "SN,location,insert,remove,duration,out,event\n"
        "A,s1,2017-01-01 00:00:00,2017-01-11 00:00:00,864000,TRUE,DBE\n"
        "A,s1,,2017-01-11 00:00:00,,,OTB\n"
        "B,s1,2017-01-21 00:00:00,2017-01-31 00:00:00,864000,FALSE,\n"
        "C,s2,2017-01-01 00:00:00,2017-01-31 00:00:00,2592000,FALSE,\n")
    result = compute_week(traces.load_trace(path, "titan"), None, None, SloSpec())
    assert result.gpus == 2
    assert result.provisioned_gpu_hours == 2 * 30 * 24
    assert result.lost_gpu_hours_by_reason == {"ecc_uncorrectable": 240}
    assert result.reliability.loc["ecc_uncorrectable", "mttr_hours"] == 240


def test_titan_bad_time_names_the_line(tmp_path):
    path = tmp_path / "gc_full.csv"
    path.write_text(
        "SN,location,insert,remove,duration,out,event\n"
        "A,s1,yesterday,2017-01-11 00:00:00,1,TRUE,DBE\n"
    )
    with pytest.raises(ParseError, match="gc_full.csv:2: field 'insert'"):
        traces.load_trace(path, "titan")


@pytest.mark.skipif(not STEPFUN.exists(), reason="shared datasets not present")
def test_real_stepfun_trace_one_week():
    frames = traces.load_trace(STEPFUN, "stepfun")
    assert frames.inventory["node"].nunique() == 400 and len(frames.inventory) == 3200
    start = traces.STEPFUN_EPOCH + pd.Timedelta(days=7)
    result = compute_week(frames, start, start + pd.Timedelta(days=7), SloSpec())
    assert result.provisioned_gpu_hours == 3200 * 168
    assert 0.5 < result.usable_ratio < 1
    assert sum(result.category_ticks.values()) == result.provisioned_ticks


@pytest.mark.skipif(not TITAN.exists(), reason="shared datasets not present")
def test_real_titan_trace():
    frames = traces.load_trace(TITAN, "titan")
    assert frames.inventory["node"].nunique() == len(frames.inventory) > 18000
    result = compute_week(
        frames,
        pd.Timestamp("2018-01-01", tz="UTC"),
        pd.Timestamp("2018-01-08", tz="UTC"),
        SloSpec(),
    )
    assert {"ecc_uncorrectable", "fallen_off_bus"} & set(result.lost_gpu_hours_by_reason)
    assert result.lost_gpu_hours_by_layer["observability"] == 0
