package redisstore

// ParseRecord is parseRecord, for the tests: a record of the string layout, "V:C:D",
// split into its version, lifetime and encoded session.
func ParseRecord(val string) (version uint64, life, rec string, ok bool) { return parseRecord(val) }
