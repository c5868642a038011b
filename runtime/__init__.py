"""The dg device model: the dghw interpreter (`interpreter`) and the host-side `Program`."""
