-- release: KEYS[1] = record; ARGV = offset, fence. Returns 1 if released, 0 if a no-op, 2 for an
-- unreadable record (nothing written).
-- Never deletes (that would reset the fence): expires the lease, raises the fence (from MAX to 1),
-- clears the token; expiresAt and the key's Redis expiry stay as they were.
local key = KEYS[1]
local r = read_record(key)
if record_status(r) == 'unreadable' then
  return 2
end
if r[1] ~= 'CLAIMED' or r[2] ~= ARGV[2] then
  return 0
end
redis.call('HSET', key, 'fence', int(next_fence(r[2])), 'leaseExpiry', int(now_ms()))
redis.call('HDEL', key, 'claimToken')
return 1
