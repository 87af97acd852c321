-- extend: KEYS[1] = record; ARGV = offset, fence, lease ms. Returns 1 if renewed, 0 otherwise, 2
-- for an unreadable record (nothing written).
-- Keeps the retention past the lease (expiresAt - leaseExpiry) the claim asked for: the value of a
-- string record stays as it is and only its expiry moves (one SET of both, as every write).
local key = KEYS[1]
local state, fence, lease, expiresAt, token, rest = read_from(key, redis.pcall('GET', key))
if state == false then
  return 2
end
if state ~= 'CLAIMED' or fence ~= ARGV[2] then
  return 0
end
local retention = expiresAt - lease
redis.call('SET', key, 'CLAIMED ' .. fence .. ' ' .. int(retention) .. ' ' .. token .. rest,
  'PXAT', int(now_ms() + tonumber(ARGV[3]) + retention))
return 1
