"""DataProto: the batch that moves between driver and workers keeps tensors, arrays and meta aligned."""

import pickle

import numpy as np
import pytest
import torch

from verl.protocol import DataProto, DataProtoItem, pad_dataproto_to_divisor, unpad_dataproto


def make(n: int = 4) -> DataProto:
    return DataProto.from_dict(
        tensors={"ids": torch.arange(n * 3).view(n, 3), "score": torch.arange(n, dtype=torch.float32)},
        non_tensors={"uid": [f"u{i}" for i in range(n)], "gt": [[i, i] for i in range(n)]},
        meta_info={"temperature": 1.0},
    )


def test_from_dict_keeps_list_values_as_one_object_per_sample():
    data = make(4)
    assert len(data) == 4
    assert data.non_tensor_batch["gt"].shape == (4,)  # not a (4, 2) array
    assert data.non_tensor_batch["gt"][2] == [2, 2]


def test_from_single_dict_splits_tensors_and_non_tensors():
    data = DataProto.from_single_dict({"x": torch.zeros(2, 5), "name": np.array(["a", "b"], dtype=object)})
    assert list(data.batch.keys()) == ["x"]
    assert list(data.non_tensor_batch) == ["name"]


def test_mismatched_sizes_are_a_clear_error():
    with pytest.raises(ValueError, match="disagree on the batch size"):
        DataProto.from_dict(tensors={"x": torch.zeros(3, 2)}, non_tensors={"uid": ["a", "b"]})
    with pytest.raises(ValueError, match="share their first dimension"):
        DataProto.from_dict(tensors={"x": torch.zeros(3, 2), "y": torch.zeros(2)})
    with pytest.raises(TypeError, match="must be a numpy array"):
        DataProto(non_tensor_batch={"uid": ["a"]})


def test_int_index_gives_an_item_and_slices_masks_arrays_give_dataprotos():
    data = make(4)
    item = data[1]
    assert isinstance(item, DataProtoItem)
    assert item.batch["ids"].tolist() == [3, 4, 5] and item.non_tensor_batch["uid"] == "u1"
    part = data[1:3]
    assert part.batch["score"].tolist() == [1.0, 2.0] and part.non_tensor_batch["uid"].tolist() == ["u1", "u2"]
    picked = data[np.array([3, 0])]
    assert picked.batch["score"].tolist() == [3.0, 0.0] and picked.non_tensor_batch["uid"].tolist() == ["u3", "u0"]
    masked = data[torch.tensor([True, False, True, False])]
    assert masked.non_tensor_batch["uid"].tolist() == ["u0", "u2"] and masked.batch["score"].tolist() == [0.0, 2.0]
    with pytest.raises(IndexError):
        data[7]
    with pytest.raises(IndexError, match="bool mask of length 2"):
        data[np.array([True, False])]


def test_select_pop_rename():
    data = make(4)
    chosen = data.select(batch_keys=["ids"], non_tensor_batch_keys=["uid"], meta_info_keys=[])
    assert list(chosen.batch.keys()) == ["ids"] and list(chosen.non_tensor_batch) == ["uid"] and chosen.meta_info == {}
    with pytest.raises(KeyError, match=r"no key\(s\) \['nope'\]"):
        data.select(batch_keys=["nope"])
    popped = data.pop(batch_keys=["score"], non_tensor_batch_keys=["gt"])
    assert list(popped.batch.keys()) == ["score"] and "score" not in data.batch.keys()
    assert "gt" not in data.non_tensor_batch and len(popped) == 4
    data.rename("ids", "input_ids")
    assert "input_ids" in data.batch.keys() and "ids" not in data.batch.keys()


def test_union_merges_and_refuses_conflicts():
    data = make(4)
    other = DataProto.from_dict(tensors={"adv": torch.ones(4), "score": torch.arange(4, dtype=torch.float32)})
    data.union(other)
    assert "adv" in data.batch.keys()
    clash = DataProto.from_dict(tensors={"score": torch.zeros(4)})
    with pytest.raises(ValueError, match="'score' exists in both with different values"):
        make(4).union(clash)
    with pytest.raises(ValueError, match="different sizes"):
        make(4).union(make(2))


def test_chunk_split_concat_round_trip():
    data = make(6)
    parts = data.chunk(3)
    assert [len(p) for p in parts] == [2, 2, 2]
    back = DataProto.concat(parts)
    assert torch.equal(back.batch["ids"], data.batch["ids"])
    assert back.non_tensor_batch["uid"].tolist() == data.non_tensor_batch["uid"].tolist()
    assert [len(p) for p in data.split(4)] == [4, 2]
    with pytest.raises(ValueError, match="pad_dataproto_to_divisor"):
        data.chunk(4)
    with pytest.raises(ValueError, match="different keys"):
        DataProto.concat([make(2), make(2).select(batch_keys=["ids"])])


def test_repeat_interleaved_and_tiled():
    data = make(2)
    assert data.repeat(3, interleave=True).non_tensor_batch["uid"].tolist() == ["u0", "u0", "u0", "u1", "u1", "u1"]
    tiled = data.repeat(2, interleave=False)
    assert tiled.non_tensor_batch["uid"].tolist() == ["u0", "u1", "u0", "u1"]
    assert tiled.batch["score"].tolist() == [0.0, 1.0, 0.0, 1.0]


def test_pad_to_divisor_and_unpad():
    data = make(5)
    padded, pad = pad_dataproto_to_divisor(data, 4)
    assert pad == 3 and len(padded) == 8
    assert padded.non_tensor_batch["uid"].tolist()[5:] == ["u0", "u1", "u2"]
    assert padded.chunk(4)[0].batch["score"].tolist() == [0.0, 1.0]
    restored = unpad_dataproto(padded, pad)
    assert torch.equal(restored.batch["ids"], data.batch["ids"])
    assert pad_dataproto_to_divisor(data, 5)[1] == 0


def test_make_iterator_is_seeded_and_covers_every_sample():
    data = make(8)
    first = [b.non_tensor_batch["uid"].tolist() for b in data.make_iterator(4, epochs=1, seed=3)]
    second = [b.non_tensor_batch["uid"].tolist() for b in data.make_iterator(4, epochs=1, seed=3)]
    assert first == second
    assert sorted(sum(first, [])) == sorted(data.non_tensor_batch["uid"].tolist())


def test_save_load_and_pickle(tmp_path):
    data = make(3)
    path = tmp_path / "batch.pkl"
    data.save_to_disk(path)
    loaded = DataProto.load_from_disk(path)
    assert torch.equal(loaded.batch["ids"], data.batch["ids"]) and loaded.meta_info == {"temperature": 1.0}
    again = pickle.loads(pickle.dumps(data[0:2]))
    assert again.non_tensor_batch["gt"][1] == [1, 1]


def test_ray_moves_a_dataproto_between_processes():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:

        @ray.remote
        def double(batch: DataProto) -> DataProto:
            batch.batch["score"] = batch.batch["score"] * 2
            return batch

        result = ray.get(double.remote(make(4)))
        assert result.batch["score"].tolist() == [0.0, 2.0, 4.0, 6.0]
        assert result.non_tensor_batch["uid"].tolist() == ["u0", "u1", "u2", "u3"]
        assert ray.get(ray.put(make(2))).meta_info == {"temperature": 1.0}
    finally:
        ray.shutdown()
