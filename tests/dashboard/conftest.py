from tests.dashboard.cluster_fixtures import cluster_kube, dashboard_crds, impersonation_rbac

__all__ = ["cluster_kube", "dashboard_crds", "impersonation_rbac"]
