# User-written Harbor tasks were called "sandbox tasks", a name the Docker container already
# had; they are authored tasks now. Renames only: the table, two reverse accessors, the model's
# permissions (codename and name, so that users and groups keep what they held), and the content
# key a behaviour's task holds, renamed with its candidate's (tasks_review 0016).

from django.db import migrations, models

# Old codename -> new codename, with the new name; Django's default permissions and our own.
PERMISSIONS = {
    "import_sandbox_task": ("import_authored_task", "Can import authored tasks and verify them in Docker"),
    **{
        f"{action}_sandboxtask": (f"{action}_authoredtask", f"Can {action} authored task")
        for action in ("add", "change", "delete", "view")
    },
}
OLD_NAMES = {
    "import_sandbox_task": "Can import sandbox tasks and verify them in Docker",
    **{f"{action}_sandboxtask": f"Can {action} sandbox task" for action in ("add", "change", "delete", "view")},
}


def rename_permissions(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    for old, (new, name) in PERMISSIONS.items():
        Permission.objects.filter(content_type__app_label="training", codename=old).update(
            codename=new, name=name
        )


def rename_permissions_back(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    for old, (new, _name) in PERMISSIONS.items():
        Permission.objects.filter(content_type__app_label="training", codename=new).update(
            codename=old, name=OLD_NAMES[old]
        )


def rename_task_keys(apps, schema_editor):
    _rekey(apps, "sandbox-", "authored-")


def rename_task_keys_back(apps, schema_editor):
    _rekey(apps, "authored-", "sandbox-")


def _rekey(apps, old, new):
    # Mined tasks' keys are bare hex digests: only an authored task's starts with a word.
    BehaviourTask = apps.get_model("training", "BehaviourTask")
    for pk, key in BehaviourTask.objects.filter(task_key__startswith=old).values_list("pk", "task_key"):
        BehaviourTask.objects.filter(pk=pk).update(task_key=new + key.removeprefix(old))


class Migration(migrations.Migration):

    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("tasks_review", "0016_candidate_family_authored"),
        ("training", "0007_behaviour_provenance_opt_ins"),
    ]

    operations = [
        migrations.RenameModel(old_name="SandboxTask", new_name="AuthoredTask"),
        migrations.AlterField(
            model_name="authoredtask",
            name="behaviour",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=models.SET_NULL,
                related_name="authored_tasks",
                to="training.behaviour",
            ),
        ),
        migrations.AlterField(
            model_name="authoredtask",
            name="candidate",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=models.PROTECT,
                related_name="authored_task",
                to="tasks_review.candidate",
            ),
        ),
        migrations.AlterModelOptions(
            name="authoredtask",
            options={
                "ordering": ["-id"],
                "permissions": [
                    ("import_authored_task", "Can import authored tasks and verify them in Docker")
                ],
            },
        ),
        migrations.RunPython(rename_permissions, rename_permissions_back, elidable=False),
        migrations.RunPython(rename_task_keys, rename_task_keys_back, elidable=False),
    ]
