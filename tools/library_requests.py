"""What the two scripts that drive the official Agora library put in place of its ``requests`` module
(record_agora_library.py, agora_library_live.py): the library's transporter calls ``requests.post(url, json=…)`` and
``requests.delete(url)``; each script says where a call goes (``_carry``), and every exchange is written down."""


class LoggedRequests:
    """``post`` and ``delete`` as the transporter calls them, each carried by ``_carry(method, url, payload)``;
    ``log`` keeps what each script writes down of every exchange."""

    def __init__(self):
        self.log = []

    def post(self, url, json=None):
        return self._carry("POST", url, json)

    def delete(self, url):
        return self._carry("DELETE", url, None)

    def _carry(self, method, url, payload):
        raise NotImplementedError
