from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("mirror", "0005_alter_kindwatch_options"),
    ]

    operations = [
        migrations.AddField(
            model_name="watcherheartbeat",
            name="lease_error",
            field=models.TextField(blank=True, default=""),
        ),
    ]
