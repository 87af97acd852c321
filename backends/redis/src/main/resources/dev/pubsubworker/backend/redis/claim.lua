-- claim: KEYS[1] = record; ARGV = offset, lease ms, ttl ms, claim token, fingerprint, has fingerprint ("1"/"0").
-- Returns {1, fence, leaseExpiry} (Won), {2, leaseExpiry, fingerprint} (HeldByOther),
-- or {3, 0, fingerprint} (AlreadyDone).
local key = KEYS[1]
local now = now_ms()
local token = ARGV[4]
local r = redis.call('HMGET', key, 'state', 'fence', 'leaseExpiry', 'expiresAt', 'claimToken', 'fingerprint')
local fence = 1
if r[1] then
  local storedLease = tonumber(r[3])
  local storedExpiry = tonumber(r[4])
  if r[1] == 'CLAIMED' and r[5] == token and now < storedExpiry then
    -- The caller's own claim, retried after a lost response: same fence, lease renewed.
    fence = tonumber(r[2])
  elseif r[1] == 'CLAIMED' and now < storedLease then
    return {2, storedLease, r[6]}
  elseif r[1] == 'DONE' and now < storedExpiry then
    return {3, 0, r[6]}
  else
    -- A lapsed lease or suppression window: reclaim over the old record, raising its fence.
    fence = tonumber(r[2]) + 1
  end
end
local leaseExpiry = now + tonumber(ARGV[2])
local expiresAt = leaseExpiry + tonumber(ARGV[3])
redis.call('HSET', key, 'state', 'CLAIMED', 'fence', int(fence), 'leaseExpiry', int(leaseExpiry),
  'expiresAt', int(expiresAt), 'claimToken', token)
if ARGV[6] == '1' then
  redis.call('HSET', key, 'fingerprint', ARGV[5])
else
  redis.call('HDEL', key, 'fingerprint')
end
redis.call('PEXPIREAT', key, int(expiresAt))
return {1, fence, leaseExpiry}
