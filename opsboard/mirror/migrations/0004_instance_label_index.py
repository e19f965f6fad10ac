from django.db import migrations

from opsboard.mirror import instance_index


class Migration(migrations.Migration):
    dependencies = [
        ("mirror", "0003_spec_versions"),
    ]

    operations = [migrations.RunPython(instance_index.create, instance_index.drop)]
