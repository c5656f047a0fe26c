"""Users and permissions (brook/acl/), against real Redis."""
