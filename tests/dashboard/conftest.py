from tests.dashboard.cluster_fixtures import cluster_kube, dashboard_crds, impersonation_rbac
from tests.dashboard.polls import one_poll_window

__all__ = ["cluster_kube", "dashboard_crds", "impersonation_rbac", "one_poll_window"]
