-- extend: KEYS[1] = record; ARGV = offset, fence, lease ms. Returns 1 if renewed, 0 otherwise, 2
-- for an unreadable record (nothing written).
-- Keeps the retention past the lease (expiresAt - leaseExpiry) the claim asked for; a PEXPIREAT
-- only when the key must live longer than it already does.
local key = KEYS[1]
local r = read_record(key)
if record_status(r) == 'unreadable' then
  return 2
end
if r[1] ~= 'CLAIMED' or r[2] ~= ARGV[2] then
  return 0
end
local storedExpiry = tonumber(r[4])
local leaseExpiry = now_ms() + tonumber(ARGV[3])
local expiresAt = leaseExpiry + storedExpiry - tonumber(r[3])
local expiresText = int(expiresAt)
redis.call('HSET', key, 'leaseExpiry', int(leaseExpiry), 'expiresAt', expiresText)
if expiresAt > storedExpiry then
  redis.call('PEXPIREAT', key, expiresText)
end
return 1
