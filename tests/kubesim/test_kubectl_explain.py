"""`kubectl explain` of built-in kinds prints kube-apiserver v1.28.7's field documentation.

The expected texts are what the rig printed. Where kubectl is a dispatcher that runs the
client matching the server's minor version (1.28 for both here), a newer client may still be
the one that runs, and newer clients add blank lines, an ENUM block and `enum:` lines of
their own: the output is compared without those, which leaves what the server's documents
say.
"""

from __future__ import annotations

import pytest

from tests.kubesim.conftest import Kubectl

EXPLAINED = {
    "deployment.spec.replicas": """
GROUP:      apps
KIND:       Deployment
VERSION:    v1
FIELD: replicas <integer>
DESCRIPTION:
    Number of desired pods. This is a pointer to distinguish between explicit
    zero and not specified. Defaults to 1.
""",
    "pod.spec.containers.image": """
KIND:       Pod
VERSION:    v1
FIELD: image <string>
DESCRIPTION:
    Container image name. More info:
    https://kubernetes.io/docs/concepts/containers/images This field is optional
    to allow higher level config management to default or override container
    images in workload controllers like Deployments and StatefulSets.
""",
    "service.spec.ports --recursive": """
KIND:       Service
VERSION:    v1
FIELD: ports <[]ServicePort>
DESCRIPTION:
    The list of ports that are exposed by this service. More info:
    https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies
    ServicePort contains information on service's port.
FIELDS:
  appProtocol\t<string>
  name\t<string>
  nodePort\t<integer>
  port\t<integer> -required-
  protocol\t<string>
  targetPort\t<IntOrString>
""",
    # The enum values are in the served documents, not in the Kubernetes repo's
    # api/openapi-spec: kube-apiserver adds them.
    "deployment.spec.strategy.type": """
GROUP:      apps
KIND:       Deployment
VERSION:    v1
FIELD: type <string>
DESCRIPTION:
    Type of deployment. Can be "Recreate" or "RollingUpdate". Default is
    RollingUpdate.
    Possible enum values:
     - `"Recreate"` Kill all existing pods before creating new ones.
     - `"RollingUpdate"` Replace the old ReplicaSets by new one using rolling
    update i.e gradually scale down the old ReplicaSets and scale up the new
    one.
""",
}


def _server_lines(out: str) -> list[str]:
    """The output without what the client's version alone decides: blank lines, the ENUM
    block (its values are indented under it) and the `enum:` lines of --recursive."""
    lines: list[str] = []
    in_enum = False
    for line in out.splitlines():
        in_enum = line == "ENUM:" or (in_enum and line.startswith("    "))
        if in_enum or not line.strip() or line.lstrip().startswith("enum: "):
            continue
        lines.append(line.rstrip())
    return lines


@pytest.mark.parametrize("args", EXPLAINED)
def test_explain_prints_the_fields_documentation(kubectl: Kubectl, args: str) -> None:
    out = kubectl("explain", *args.split()).stdout
    assert _server_lines(out) == EXPLAINED[args].strip("\n").splitlines()
