-- inspect: KEYS[1] = record; ARGV = offset.
-- Returns {now, state, fence, leaseExpiry, expiresAt, claimToken, fingerprint}; state is nil if absent.
local r = redis.call('HMGET', KEYS[1], 'state', 'fence', 'leaseExpiry', 'expiresAt', 'claimToken', 'fingerprint')
return {now_ms(), r[1], r[2], r[3], r[4], r[5], r[6]}
