# The kept-task row of a user-written task had family "sandbox", a name the Docker container
# already had; it is "authored" now (Candidate.AUTHORED). Its content key carried the family as
# a prefix and its payload named the import row: both follow, so that a folder kept before
# is still found by its key (training.services.authored refuses it again) and the key stays
# the one training's BehaviourTask rows hold (renamed with it, training 0008).

from django.db import migrations

FAMILIES = {"forwards": ("sandbox", "authored"), "backwards": ("authored", "sandbox")}
PAYLOAD_KEYS = {"forwards": ("sandbox_task", "authored_task"), "backwards": ("authored_task", "sandbox_task")}


def _rename(apps, direction):
    Candidate = apps.get_model("tasks_review", "Candidate")
    old, new = FAMILIES[direction]
    old_field, new_field = PAYLOAD_KEYS[direction]
    for candidate in Candidate.objects.filter(family=old).only("pk", "key", "payload"):
        payload = dict(candidate.payload or {})
        if old_field in payload:
            payload[new_field] = payload.pop(old_field)
        key = candidate.key
        if key.startswith(f"{old}-"):
            key = f"{new}-" + key.removeprefix(f"{old}-")
        Candidate.objects.filter(pk=candidate.pk).update(family=new, key=key, payload=payload)


def forwards(apps, schema_editor):
    _rename(apps, "forwards")


def backwards(apps, schema_editor):
    _rename(apps, "backwards")


class Migration(migrations.Migration):

    dependencies = [
        ("tasks_review", "0015_datasetexport_job_pipelinerun_created_by"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards, elidable=False),
    ]
