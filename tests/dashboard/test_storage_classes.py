"""What a review that grows a BookStore's claims says of their StorageClass (pure)."""

from __future__ import annotations

from opsboard.dashboard.storage_classes import expansion_warning


def test_a_class_that_allows_expansion_says_nothing() -> None:
    allows = {"metadata": {"name": "standard"}, "allowVolumeExpansion": True}
    assert expansion_warning("BookStore", "standard", ["data-shop-db-0"], allows) == ""


def test_a_class_that_does_not_say_it_allows_expansion_is_told_for_each_of_its_claims() -> None:
    # allowVolumeExpansion unset is false, as the API server's PersistentVolumeClaimResize reads it
    said = expansion_warning(
        "BookStore", "slow", ["data-shop-db-0", "data-shop-db-1"], {"metadata": {"name": "slow"}}
    )
    assert said.startswith(
        "StorageClass slow of the claims data-shop-db-0, data-shop-db-1 does not allow volumes "
        "to grow (allowVolumeExpansion): the API server will refuse to grow them, and the "
        "BookStore will be Degraded (VolumeExpansionFailed) until a cluster administrator "
        """allows it (kubectl patch storageclass slow -p '{"allowVolumeExpansion": true}')"""
    )
    assert said.endswith("The operator grows them then.")


def test_a_class_that_could_not_be_read_is_said_unchecked_with_why() -> None:
    why = "the web app may not read StorageClasses (…)"
    assert expansion_warning("BookStore", "standard", ["data-shop-db-0"], why) == (
        "Whether StorageClass standard lets the claim data-shop-db-0 grow was not checked: " + why
    )
