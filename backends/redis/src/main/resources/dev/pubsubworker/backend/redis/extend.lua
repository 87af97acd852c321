-- extend: KEYS[1] = record; ARGV = offset, fence, lease ms. Returns 1 if renewed, 0 otherwise, 2
-- for an unreadable record (nothing written).
-- Keeps the retention past the lease (expiresAt - leaseExpiry) the claim asked for: the value of a
-- string record stays as it is and only its expiry moves (one SET of both, as every write).
local key = KEYS[1]
local r = read_record(key)
if r == false then
  return 2
end
if not r or r[1] ~= 'CLAIMED' or r[2] ~= ARGV[2] then
  return 0
end
local retention = r[4] - r[3]
local expiresAt = now_ms() + tonumber(ARGV[3]) + retention
redis.call('SET', key, encode('CLAIMED', r[2], retention, r[5], r[6]), 'PXAT', int(expiresAt))
return 1
