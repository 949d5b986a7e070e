"""A third-party app written with Python's authlib, against Gable's authorization server.

Run by tests/tests/it/oauth/clients.rs with the tools' venv (.ci/install-tools installs
authlib and requests). The "browser" part (opening the authorization URL with the user's
console session and pressing Allow) is done with requests; everything an app does is
authlib's: the authorization URL with PKCE S256, the code exchange with
client_secret_basic, the API call with the bearer token, the refresh, the revocation.

Environment: GABLE_URL (the production base address), GABLE_SESSION (a console session
token), CLIENT_ID, CLIENT_SECRET, REDIRECT_URI. Prints a JSON report on stdout.
"""

import json
import os
import sys
from html.parser import HTMLParser

import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session

BASE = os.environ["GABLE_URL"]
SESSION = os.environ["GABLE_SESSION"]


class ConsentForm(HTMLParser):
    """The hidden inputs of Gable's consent page, and the scopes it offers (ticked)."""

    def __init__(self):
        super().__init__()
        self.fields = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "input" and a.get("type") == "hidden":
            self.fields.append((a["name"], a.get("value", "")))
        if tag == "input" and a.get("type") == "checkbox" and "checked" in a:
            self.fields.append((a["name"], a["value"]))


def press_allow(authorization_url):
    """The user's browser: open the URL signed in, press Allow; return the callback URL."""
    browser = requests.Session()
    browser.headers["Cookie"] = f"gable_session={SESSION}"
    page = browser.get(authorization_url, allow_redirects=False)
    if page.status_code != 200:
        sys.exit(f"consent page: {page.status_code} {page.text[:300]}")
    form = ConsentForm()
    form.feed(page.text)
    answer = browser.post(
        f"{BASE}/oauth/authorize",
        data=form.fields + [("decision", "allow")],
        headers={"Origin": BASE},
        allow_redirects=False,
    )
    if answer.status_code != 303:
        sys.exit(f"consent answer: {answer.status_code} {answer.text[:300]}")
    return answer.headers["Location"]


def main():
    app = OAuth2Session(
        os.environ["CLIENT_ID"],
        os.environ["CLIENT_SECRET"],
        scope="properties:read",
        redirect_uri=os.environ["REDIRECT_URI"],
        code_challenge_method="S256",
        token_endpoint_auth_method="client_secret_basic",
    )
    verifier = generate_token(64)
    url, state = app.create_authorization_url(f"{BASE}/oauth/authorize", code_verifier=verifier)
    callback = press_allow(url)
    token = app.fetch_token(f"{BASE}/oauth/token", authorization_response=callback, state=state, code_verifier=verifier)
    report = {"scope": token.get("scope")}
    report["properties_status"] = app.get(f"{BASE}/v1/properties").status_code
    report["leases_status"] = app.get(f"{BASE}/v1/leases").status_code
    old_refresh = token["refresh_token"]
    refreshed = app.refresh_token(f"{BASE}/oauth/token")
    report["refreshed"] = refreshed["refresh_token"] != old_refresh and app.get(f"{BASE}/v1/properties").status_code == 200
    app.revoke_token(f"{BASE}/oauth/revoke", token=refreshed["refresh_token"], token_type_hint="refresh_token")
    report["after_revoke_status"] = app.get(f"{BASE}/v1/properties").status_code
    print(json.dumps(report))


if __name__ == "__main__":
    main()
