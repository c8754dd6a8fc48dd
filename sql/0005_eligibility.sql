-- 0005_eligibility: who may be invited to a match, defined once for the search count
-- (eligiblePlayersNearby), the invitations sent on payment and the substitutes after an
-- absence. Callers add the per-match exclusions (already playing, already invited).
--
-- Eligible: a profile with a home location within the radius of the centre (great circle,
-- index-backed through earth_box), automatic invitations on, a skill level equal to the one
-- asked (any level for ANY), not banned, reliability at or above the minimum.

CREATE FUNCTION eligible_players(p_lat double precision, p_lng double precision,
                                 p_radius_km numeric, p_skill text,
                                 p_min_reliability integer, p_now timestamptz DEFAULT now())
    RETURNS TABLE (user_id uuid)
    LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT p.user_id
      FROM players p
     WHERE p.home_latitude IS NOT NULL
       AND p.match_notifications
       AND earth_box(ll_to_earth(p_lat, p_lng), p_radius_km * 1000)
           @> ll_to_earth(p.home_latitude, p.home_longitude)
       AND earth_distance(ll_to_earth(p_lat, p_lng), ll_to_earth(p.home_latitude, p.home_longitude))
           <= p_radius_km * 1000
       AND p.skill_level IS NOT NULL
       AND (p_skill = 'ANY' OR p.skill_level = p_skill)
       AND (p.banned_until IS NULL OR p.banned_until <= p_now)
       AND p.reliability_score >= p_min_reliability;
END;
COMMENT ON FUNCTION eligible_players(double precision, double precision, numeric, text, integer, timestamptz)
    IS 'Players that may be invited to a match searched around (lat, lng) within a radius.';
