-- claim of one record, shared by claim.lua and claim_all.lua. Returns {1, fence, leaseExpiry}
-- (Won), {2, leaseExpiry, fingerprint} (HeldByOther), {3, 0, fingerprint} (AlreadyDone) or {4}
-- (an unreadable record: nothing written).
-- Redis work: one HMGET; on Won one HSET with every field (and an HDEL only when a fingerprint
-- stored by an earlier claim must go), and a PEXPIREAT only when the key must live longer than it
-- already does (the key's expiry is never earlier than the record's expiresAt field).
local function claim_entry(key, now, lease, ttl, token, fingerprint, has_fingerprint)
  local r = read_record(key)
  local status = record_status(r)
  if status == 'unreadable' then
    return {4}
  end
  -- Each number is formatted once (string.format is one of the larger costs of the Lua side): fence
  -- as stored when it does not change, '1' for a new record.
  local fence = 1
  local fenceText = '1'
  local storedExpiry = 0
  if status == 'ok' then
    local state = r[1]
    storedExpiry = tonumber(r[4])
    if state == 'CLAIMED' and r[5] == token and now < storedExpiry then
      -- The caller's own claim, retried after a lost response: same fence, lease renewed.
      fence = tonumber(r[2])
      fenceText = r[2]
    elseif state == 'CLAIMED' and now < tonumber(r[3]) then
      return {2, tonumber(r[3]), r[6]}
    elseif state == 'DONE' and now < storedExpiry then
      return {3, 0, r[6]}
    else
      -- A lapsed lease or suppression window: reclaim over the old record, raising its fence.
      fence = next_fence(r[2])
      fenceText = int(fence)
    end
  end
  local leaseExpiry = now + lease
  local expiresAt = leaseExpiry + ttl
  local expiresText = int(expiresAt)
  if has_fingerprint then
    redis.call('HSET', key, 'state', 'CLAIMED', 'fence', fenceText, 'leaseExpiry', int(leaseExpiry),
      'expiresAt', expiresText, 'claimToken', token, 'fingerprint', fingerprint)
  else
    redis.call('HSET', key, 'state', 'CLAIMED', 'fence', fenceText, 'leaseExpiry', int(leaseExpiry),
      'expiresAt', expiresText, 'claimToken', token)
    if r[6] then
      redis.call('HDEL', key, 'fingerprint')
    end
  end
  if expiresAt > storedExpiry then
    redis.call('PEXPIREAT', key, expiresText)
  end
  return {1, fence, leaseExpiry}
end
