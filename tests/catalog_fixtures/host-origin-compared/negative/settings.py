LOOPBACK = ("127.0.0.1", "localhost", "::1")


def describe(host: str) -> str:
    if host in ("0.0.0.0", "::"):
        return "all interfaces"
    if host == "localhost":
        return "loopback"
    return "origin" if host is None else host
