-- extend: KEYS[1] = record; ARGV = offset, fence, lease ms. Returns 1 if renewed, 0 otherwise.
-- Keeps the retention past the lease (expiresAt - leaseExpiry) the claim asked for.
local key = KEYS[1]
local r = redis.call('HMGET', key, 'state', 'fence', 'leaseExpiry', 'expiresAt')
if r[1] ~= 'CLAIMED' or r[2] ~= ARGV[2] then
  return 0
end
local retention = tonumber(r[4]) - tonumber(r[3])
local leaseExpiry = now_ms() + tonumber(ARGV[3])
local expiresAt = leaseExpiry + retention
redis.call('HSET', key, 'leaseExpiry', int(leaseExpiry), 'expiresAt', int(expiresAt))
redis.call('PEXPIREAT', key, int(expiresAt))
return 1
