from tests.dashboard.cluster_fixtures import cluster_kube, dashboard_crds

__all__ = ["cluster_kube", "dashboard_crds"]
