-- release: KEYS[1] = record; ARGV = offset, fence. Returns 1 if released, 0 if a no-op.
-- Never deletes (that would reset the fence): expires the lease, raises the fence, clears the token;
-- expiresAt and the key's Redis expiry stay as they were.
local key = KEYS[1]
local r = redis.call('HMGET', key, 'state', 'fence')
if r[1] ~= 'CLAIMED' or r[2] ~= ARGV[2] then
  return 0
end
redis.call('HSET', key, 'fence', int(tonumber(r[2]) + 1), 'leaseExpiry', int(now_ms()))
redis.call('HDEL', key, 'claimToken')
return 1
