from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tasks_review", "0005_pipeline_stage_started"),
    ]

    operations = [
        migrations.AddField(
            model_name="candidate",
            name="verifier_version",
            field=models.PositiveSmallIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="candidate",
            name="check_assertions",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="candidate",
            name="check_asserted_inputs",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="candidate",
            name="check_tests",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
    ]
