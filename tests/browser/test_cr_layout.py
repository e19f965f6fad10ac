"""Tables fit their card at common widths: a long condition message on the CR page, or a
long image in the list of resources (an image reference is one unbroken word), wraps
instead of pushing the last columns out of sight."""

from __future__ import annotations

import pytest

from opsboard.mirror.models import KubeObject
from tests.browser.conftest import screenshot
from tests.dashboard.mirror_factory import memcached_with_pods

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
IMAGE = "registry.example.com/" + "/".join(f"team{i}averylongpathsegment" for i in range(8)) + ":v1"
MESSAGE = f"Image {IMAGE} cannot be pulled: 3 pods wait for it, e.g. cache-7d9f-00000"
# The parts of an element that stick out of its card, in CSS pixels.
OVERFLOW = """el => {
  const card = el.closest('.card');
  return [el.scrollWidth - card.clientWidth, el.getBoundingClientRect().right
          - card.getBoundingClientRect().right];
}"""


def _cr_with_long_messages() -> KubeObject:
    cr = memcached_with_pods("cache", size=1)
    cr.status["conditions"] = [
        {"type": "Available", "status": "False", "reason": "PodsNotReady",
         "message": "0/1 pod ready", "lastTransitionTime": "2026-11-29T21:23:59Z"},
        {"type": "Degraded", "status": "True", "reason": "ImagePullFailed", "message": MESSAGE,
         "lastTransitionTime": "2026-11-29T21:23:59Z"},
    ]  # fmt: skip
    cr.body["status"] = cr.status
    cr.save()
    return cr


@pytest.mark.parametrize("width", [1280, 800])
def test_a_long_condition_message_wraps_inside_the_status_card(
    page_as, live_server, admin_user, width: int
) -> None:
    _cr_with_long_messages()
    page = page_as(admin_user, width=width)
    page.goto(f"{live_server.url}/k/memcached/default/cache/")
    table = page.locator("table:has(caption:text('Conditions'))")
    table.get_by_text("team7averylongpathsegment", exact=False).wait_for()
    sticking_out = table.evaluate(OVERFLOW)
    screenshot(page, f"cr-conditions-{width}")
    assert max(sticking_out) <= 0, f"the table sticks out of its card by {sticking_out} px"
    since = table.locator("td time").last  # the last column is there, not scrolled away
    assert since.get_attribute("title") == "2026-11-29T21:23:59Z"
    assert since.inner_text().endswith(" ago") and since.is_visible()


# Below 1024 px the list's eight columns scroll sideways whatever the image: .scroll.
@pytest.mark.parametrize("width", [1280, 1024])
def test_a_long_image_wraps_inside_the_list_of_all_resources(
    page_as, live_server, admin_user, width: int
) -> None:
    cr = memcached_with_pods("cache", size=1)
    cr.spec["image"] = IMAGE
    cr.body["spec"] = cr.spec
    cr.save()
    page = page_as(admin_user, width=width)
    page.goto(f"{live_server.url}/crs/")
    table = page.locator("table.crs")
    table.get_by_text("team7averylongpathsegment", exact=False).wait_for()
    scroll = page.locator("#cr-table .scroll")
    sticking_out = scroll.evaluate("el => el.scrollWidth - el.clientWidth")
    screenshot(page, f"crs-long-image-{width}")
    assert sticking_out <= 0, f"the list scrolls sideways by {sticking_out} px"
    assert table.get_by_role("link", name="Age", exact=True).is_visible()  # the last column
