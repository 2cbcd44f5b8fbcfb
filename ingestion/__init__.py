"""Documents -> converted text -> header-prefixed chunks -> the store."""
