# The audit trail now belongs to groundwork (its 0001 takes over this state); the table, its rows
# and its indexes stay as they are: a change of state only, no SQL.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('tasks_review', '0012_desksetting_reviews_and_labels_per_item'),
        ('groundwork', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name='AuditEvent')],
            database_operations=[],
        ),
    ]
