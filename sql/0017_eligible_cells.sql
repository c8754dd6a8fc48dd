-- 0017_eligible_cells: the eligible-player count of a search no longer rescans homes when
-- the area is dense.
--
-- A search answers eligiblePlayersNearby capped at 100 ("100 or more"). Walking the homes
-- nearest first (0015) still reads a hundred-odd GiST entries and checks each one's
-- distance: about 2.5 ms of the 7 ms a CITY search cost. Yet in a city the answer is
-- nearly always the cap, and telling that needs no single home: it is enough to know that
-- more than the cap live in places wholly inside the radius.
--
-- player_home_cells counts, per cell of a fixed grid (a hundredth of a degree each way, about
-- 1.1 km by 0.85 km in Madrid), skill level and reliability score, the players a match could
-- invite whatever the clock says: a home, match notifications on, a skill level, and no ban
-- recorded (banned_until NULL). Statement triggers on players keep it exact in the same
-- transaction as every write. A player whose ban has lapsed keeps banned_until and is not
-- counted: the cells give a lower bound of the eligible players, never more.
--
-- eligible_players_count sums the cells of the largest block of whole cells around the
-- centre whose four corners lie inside the radius (on a sphere the farthest point of such a
-- block from the centre is a corner), a row of cells at a time from the centre outwards, and
-- answers the cap as soon as the sum exceeds it (by one more than the cap, so excluding the
-- caller still leaves the cap). Otherwise, a village, a small radius or the edge of the
-- grid, it counts exactly as before, nearest first up to the cap. Both ways give the same
-- number; tests/63-eligible-cells.bats compares them on random centres.

-- the grid: cell n of a coordinate spans [n / 100, (n + 1) / 100) degrees

CREATE TABLE player_home_cells (
    cell_lat          integer NOT NULL,
    cell_lng          integer NOT NULL,
    skill_level       text NOT NULL,
    reliability_score integer NOT NULL,
    players           integer NOT NULL CONSTRAINT player_home_cells_players_check CHECK (players >= 0),
    PRIMARY KEY (cell_lat, cell_lng, skill_level, reliability_score)
);
COMMENT ON TABLE player_home_cells IS
    'Players with a home, match notifications, a skill level and no recorded ban, counted per grid cell (home_cell), skill level and reliability score; kept by statement triggers on players.';
