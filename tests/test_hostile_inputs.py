"""Small hostile inputs, built here, that once ended in a traceback or a silent wrong answer:
each now ends in one line with exit 2, or a correct result with a note."""

from __future__ import annotations

import copy
import json
import pickle

import pytest

from slabscope.app.cli import main
from bench.hostile_inputs import relu_chain, write_pt2


def _one_line(capsys, code: int, argv: list[str], *fragments: str) -> str:
    assert main(argv) == code
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, err
    return err


@pytest.mark.parametrize("target", ["torch.ops.aten.reshape.default",
                                    "torch.ops.aten.flatten.using_ints"])
@pytest.mark.parametrize("command", ["plan", "export", "allocator"])
def test_a_reshape_of_a_tensor_with_too_few_strides_is_one_line(tmp_path, capsys, target,
                                                                command):
    program = relu_chain(2)
    values = program["graph_module"]["graph"]["tensor_values"]
    values["t1"] = copy.deepcopy(values["t1"])
    values["t1"]["strides"] = values["t1"]["strides"][:1]  # one stride for two sizes
    values["r"] = copy.deepcopy(values["t0"])
    values["r"]["sizes"] = [{"as_int": 128}]
    values["r"]["strides"] = [{"as_int": 1}]
    arguments = [{"name": "self", "arg": {"as_tensor": {"name": "t1"}}, "kind": 1}]
    arguments.append({"name": "shape", "arg": {"as_ints": [128]}, "kind": 1}
                     if "reshape" in target else
                     {"name": "start_dim", "arg": {"as_int": 0}, "kind": 1})
    program["graph_module"]["graph"]["nodes"].append(
        {"target": target, "inputs": arguments, "outputs": [{"as_tensor": {"name": "r"}}],
         "metadata": {}})
    path = write_pt2(tmp_path / "strides.pt2", program)
    argv = [command, str(path)] + (["--png", str(tmp_path / "out.png")]
                                   if command == "export" else [])
    _one_line(capsys, 2, argv, "tensor 't1' has 1 strides for 2 sizes")
    assert not (tmp_path / "out.png").exists()


@pytest.mark.parametrize("traces", [7, True, 2.5, "trace", None, {"0": []}])
@pytest.mark.parametrize("command", ["plan", "allocator"])
def test_device_traces_that_are_not_a_list_are_one_line(tmp_path, capsys, traces, command):
    path = tmp_path / "odd.pickle"
    path.write_bytes(pickle.dumps({"segments": [], "device_traces": traces}))
    _one_line(capsys, 2, [command, str(path)], "no allocation trace")



@pytest.mark.parametrize("command", ["plan", "allocator"])
def test_overlapping_segments_are_refused_not_counted_twice(tmp_path, capsys, command):
    mib, base = 1 << 20, 1 << 40

    def segment(addr: int) -> dict:
        return {"device": 0, "address": addr, "total_size": 20 * mib, "stream": 0,
                "segment_type": "large", "frames": [], "blocks": [
                    {"address": addr, "size": 20 * mib, "requested_size": 0,
                     "state": "inactive", "frames": []}]}

    events = [{"action": "alloc", "addr": base, "size": 512, "stream": 0, "time_us": 1,
               "frames": []},
              {"action": "free_completed", "addr": base, "size": 512, "stream": 0,
               "time_us": 2, "frames": []}]
    path = tmp_path / "overlap.pickle"
    path.write_bytes(pickle.dumps({"segments": [segment(base), segment(base + 2 * mib)],
                                   "device_traces": [events]}))
    _one_line(capsys, 2, [command, str(path)], "segments 0x10000000000 (20,971,520 bytes) and "
              "0x10000200000 (20,971,520 bytes) overlap")


def _argument_error(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("value", ["9" * 26, str(1 << 44), "9" * 5000, "-1", "0", "1e3"])
def test_max_split_size_past_64_bits_or_not_a_number_is_refused(capsys, value):
    err = _argument_error(capsys, ["allocator", "assets/example_graphs/diamond.json",
                                   "--max-split-size-mb", value])
    assert "--max-split-size-mb" in err and len(err) < 300


def test_the_largest_max_split_size_is_accepted(capsys):
    assert main(["allocator", "assets/example_graphs/diamond.json", "--max-split-size-mb",
                 str((1 << 44) - 1)]) == 0


@pytest.mark.parametrize("option", ["--seed", "--iterations", "--budget", "--capacity"])
def test_a_five_thousand_digit_argument_is_not_echoed_whole(capsys, option):
    err = _argument_error(capsys, ["plan", "assets/example_graphs/diamond.json", option,
                                   "9" * 5000])
    assert len(err) < 400 and "5,0" in err


def test_an_integer_past_pythons_digit_limit_names_no_interpreter_knob(tmp_path, capsys):
    program = relu_chain(1)
    program["graph_module"]["graph"]["tensor_values"]["t0"] = {"dtype": 7, "sizes": []}
    text = json.dumps(program).replace('"sizes": []', '"sizes": [{"as_int": ' + "9" * 5000 + "}]")
    path = write_pt2(tmp_path / "digits.pt2", text.encode())
    err = _one_line(capsys, 2, ["plan", str(path)], "an integer of over 4,300 digits")
    assert "set_int_max_str_digits" not in err
