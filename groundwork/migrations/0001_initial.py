# The audit trail moves to the ground floor as a change of state only: the review desk made its
# table (tasks_review 0002) and it stays where it is, with its rows, under its own name. Neither
# this migration nor tasks_review 0013 (which drops the desk's state of it) runs any SQL.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('tasks_review', '0012_desksetting_reviews_and_labels_per_item'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='AuditEvent',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('verb', models.CharField(db_index=True, max_length=40)),
                        ('target_type', models.CharField(db_index=True, max_length=40)),
                        ('target_id', models.CharField(db_index=True, max_length=40)),
                        ('before', models.JSONField(blank=True, null=True)),
                        ('after', models.JSONField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True, db_index=True)),
                        ('actor', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'tasks_review_auditevent',
                        'ordering': ['-id'],
                        'indexes': [models.Index(fields=['target_type', 'target_id'], name='tasks_revie_target__4c4d1c_idx')],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
