# "Reserved" and "held" were one concept with two names; the fields now say "held". A change of
# state only: the columns keep their names (db_column), so no SQL runs and no row moves.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('tasks_review', '0013_auditevent_to_groundwork'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RenameField(model_name='candidate', old_name='reserved_by', new_name='held_by'),
                migrations.RenameField(model_name='candidate', old_name='reserved_until', new_name='held_until'),
                migrations.AlterField(
                    model_name='candidate',
                    name='held_by',
                    field=models.ForeignKey(blank=True, db_column='reserved_by_id', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
                ),
                migrations.AlterField(
                    model_name='candidate',
                    name='held_until',
                    field=models.DateTimeField(blank=True, db_column='reserved_until', null=True),
                ),
            ],
            database_operations=[],
        ),
    ]
