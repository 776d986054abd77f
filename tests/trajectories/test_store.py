"""DbBlobs keeps the BlobStore promises over the Blob table, like MemoryBlobs does in memory."""

import pytest

from trajectories.core.blobs import BlobStore, MemoryBlobs
from trajectories.models import Blob
from trajectories.store import DbBlobs

pytestmark = pytest.mark.django_db

MISSING = "0" * 64


@pytest.mark.parametrize("make", [DbBlobs, MemoryBlobs], ids=["db", "memory"])
def test_getting_a_sha_that_was_never_stored_raises_key_error(make):
    blobs: BlobStore = make()
    with pytest.raises(KeyError, match=MISSING):
        blobs.get(MISSING)
    assert not blobs.has(MISSING)


def test_a_blob_comes_back_before_and_after_the_buffer_is_flushed():
    blobs = DbBlobs(flush_every=2)
    first = blobs.put(b"one")
    assert blobs.get(first) == b"one" and not Blob.objects.exists()
    second = blobs.put(b"two")
    assert Blob.objects.count() == 2
    assert (blobs.get(first), DbBlobs().get(second)) == (b"one", b"two")
