-- 0001_core: the tables of venues and their courts: users, venues, venue_images,
-- venue_holidays, resources (courts), resource_schedules, price_rules and resource_images;
-- the timerange type, so that a constraint refuses overlapping price rules; and the
-- extensions of the geographic index and of the exclusion constraints.
-- Every value the API shows is stored here; sql/areas/90_json.sql builds the JSON of each
-- object once, so that every endpoint answers with the same fields.
-- The rules over these tables: sql/areas/30_slots.sql (a court's slots),
-- sql/areas/20_versions.sql (the versions their changes stamp), sql/areas/90_json.sql.

CREATE EXTENSION IF NOT EXISTS cube;
CREATE EXTENSION IF NOT EXISTS earthdistance;
CREATE EXTENSION IF NOT EXISTS btree_gist;

-- A time-of-day range, so that overlapping price rules can be refused by a constraint.
CREATE TYPE timerange AS RANGE (subtype = time);
COMMENT ON TYPE timerange IS 'Half-open range of times of day, [start, end).';

CREATE TABLE users (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    issuer      text NOT NULL,
    subject     text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (issuer, subject)
);
COMMENT ON TABLE users IS 'Local identity of a token holder, created on first sight of (iss, sub).';
COMMENT ON COLUMN users.id IS 'Local UUID shown as ownerId / playerId; the raw sub is never shown.';
COMMENT ON COLUMN users.issuer IS 'JWT iss claim.';
COMMENT ON COLUMN users.subject IS 'JWT sub claim.';
COMMENT ON COLUMN users.created_at IS 'First request seen with this identity.';

CREATE TABLE venues (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    owner_id      uuid NOT NULL REFERENCES users(id),
    name          text NOT NULL CHECK (btrim(name) <> ''),
    description   text,
    street        text NOT NULL CHECK (btrim(street) <> ''),
    city          text NOT NULL CHECK (btrim(city) <> ''),
    country       text NOT NULL CHECK (btrim(country) <> ''),
    postal_code   text,
    latitude      double precision NOT NULL CHECK (latitude BETWEEN -90 AND 90),
    longitude     double precision NOT NULL CHECK (longitude BETWEEN -180 AND 180),
    timezone      text NOT NULL,
    status        text NOT NULL DEFAULT 'PENDING_APPROVAL'
                  CHECK (status IN ('ACTIVE', 'SUSPENDED', 'PENDING_APPROVAL', 'REJECTED')),
    suspended_by  text CHECK (suspended_by IN ('OWNER', 'ADMIN')),
    reject_reason text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'SUSPENDED') = (suspended_by IS NOT NULL)),
    CHECK ((status = 'REJECTED') = (reject_reason IS NOT NULL))
);
COMMENT ON TABLE venues IS 'A club or site with courts, owned by one owner.';
COMMENT ON COLUMN venues.owner_id IS 'The owner (users.id) who registered the venue.';
COMMENT ON COLUMN venues.name IS 'Display name, not blank.';
COMMENT ON COLUMN venues.description IS 'Free text, optional.';
COMMENT ON COLUMN venues.street IS 'Street address, not blank.';
COMMENT ON COLUMN venues.city IS 'City, not blank.';
COMMENT ON COLUMN venues.country IS 'Country, not blank.';
COMMENT ON COLUMN venues.postal_code IS 'Postal code, optional.';
COMMENT ON COLUMN venues.latitude IS 'WGS84 latitude in degrees.';
COMMENT ON COLUMN venues.longitude IS 'WGS84 longitude in degrees.';
COMMENT ON COLUMN venues.timezone IS 'IANA zone; API dates and times of this venue are local to it.';
COMMENT ON COLUMN venues.status IS 'ACTIVE, SUSPENDED, PENDING_APPROVAL or REJECTED.';
COMMENT ON COLUMN venues.suspended_by IS 'Who suspended: OWNER may lift their own, ADMIN only an admin.';
COMMENT ON COLUMN venues.reject_reason IS 'Why an administrator rejected it; set only when REJECTED.';
COMMENT ON COLUMN venues.created_at IS 'Creation time.';
COMMENT ON COLUMN venues.updated_at IS 'Last change of any field, status included.';

CREATE INDEX venues_owner_idx ON venues (owner_id, created_at);
CREATE INDEX venues_status_idx ON venues (status, created_at);
-- The radius search: earth_box(ll_to_earth(lat, lng), r) @> ll_to_earth(latitude, longitude).
CREATE INDEX venues_earth_idx ON venues USING gist (ll_to_earth(latitude, longitude))
    WHERE status = 'ACTIVE';

CREATE TABLE venue_images (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    venue_id   uuid NOT NULL REFERENCES venues(id),
    url        text NOT NULL CHECK (btrim(url) <> ''),
    public_id  text NOT NULL CHECK (btrim(public_id) <> ''),
    created_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE venue_images IS 'Pictures of a venue, hosted on an external CDN.';
COMMENT ON COLUMN venue_images.venue_id IS 'The venue shown.';
COMMENT ON COLUMN venue_images.url IS 'Full URL of the picture on the CDN.';
COMMENT ON COLUMN venue_images.public_id IS 'CDN public identifier, used to delete it there.';
COMMENT ON COLUMN venue_images.created_at IS 'When it was added; images are listed in this order.';
CREATE INDEX venue_images_venue_idx ON venue_images (venue_id, created_at);

CREATE TABLE venue_holidays (
    venue_id   uuid NOT NULL REFERENCES venues(id),
    date       date NOT NULL,
    name       text NOT NULL CHECK (btrim(name) <> ''),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (venue_id, date)
);
COMMENT ON TABLE venue_holidays IS 'Dates on which HOLIDAY price rules of the venue apply.';
COMMENT ON COLUMN venue_holidays.venue_id IS 'The venue.';
COMMENT ON COLUMN venue_holidays.date IS 'Local date of the holiday.';
COMMENT ON COLUMN venue_holidays.name IS 'What the holiday is called.';
COMMENT ON COLUMN venue_holidays.created_at IS 'When the owner added it.';

CREATE TABLE resources (
    id                    uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    venue_id              uuid NOT NULL REFERENCES venues(id),
    name                  text NOT NULL CHECK (btrim(name) <> ''),
    description           text,
    type                  text NOT NULL CHECK (type IN ('PADEL_COURT', 'TENNIS_COURT')),
    slot_duration_minutes integer NOT NULL
                          CHECK (slot_duration_minutes BETWEEN 15 AND 240
                                 AND slot_duration_minutes % 5 = 0),
    status                text NOT NULL DEFAULT 'PENDING_APPROVAL'
                          CHECK (status IN ('ACTIVE', 'SUSPENDED', 'PENDING_APPROVAL', 'REJECTED')),
    suspended_by          text CHECK (suspended_by IN ('OWNER', 'ADMIN')),
    reject_reason         text,
    created_at            timestamptz NOT NULL DEFAULT now(),
    updated_at            timestamptz NOT NULL DEFAULT now(),
    CHECK ((status = 'SUSPENDED') = (suspended_by IS NOT NULL)),
    CHECK ((status = 'REJECTED') = (reject_reason IS NOT NULL))
);
COMMENT ON TABLE resources IS 'A bookable court of a venue.';
COMMENT ON COLUMN resources.venue_id IS 'Parent venue.';
COMMENT ON COLUMN resources.name IS 'Display name, not blank.';
COMMENT ON COLUMN resources.description IS 'Free text, optional.';
COMMENT ON COLUMN resources.type IS 'PADEL_COURT or TENNIS_COURT.';
COMMENT ON COLUMN resources.slot_duration_minutes IS 'Length of one booking slot: 15..240, multiple of 5.';
COMMENT ON COLUMN resources.status IS 'ACTIVE, SUSPENDED, PENDING_APPROVAL or REJECTED.';
COMMENT ON COLUMN resources.suspended_by IS 'Who suspended: OWNER may lift their own, ADMIN only an admin.';
COMMENT ON COLUMN resources.reject_reason IS 'Why an administrator rejected it; set only when REJECTED.';
COMMENT ON COLUMN resources.created_at IS 'Creation time.';
COMMENT ON COLUMN resources.updated_at IS 'Last change, schedules, rules and images included.';
CREATE INDEX resources_venue_idx ON resources (venue_id, created_at);
CREATE INDEX resources_status_idx ON resources (status, created_at);

CREATE TABLE resource_schedules (
    resource_id  uuid NOT NULL REFERENCES resources(id),
    day_of_week  smallint NOT NULL CHECK (day_of_week BETWEEN 1 AND 7),
    opening_time time,
    closing_time time,
    PRIMARY KEY (resource_id, day_of_week),
    CHECK ((opening_time IS NULL) = (closing_time IS NULL)),
    CHECK (closing_time > opening_time)
);
COMMENT ON TABLE resource_schedules IS 'Weekly opening hours of a court, one row per day that was set.';
COMMENT ON COLUMN resource_schedules.resource_id IS 'The court.';
COMMENT ON COLUMN resource_schedules.day_of_week IS 'ISO day: 1 = MONDAY .. 7 = SUNDAY.';
COMMENT ON COLUMN resource_schedules.opening_time IS 'Local opening time; NULL with closing_time means closed.';
COMMENT ON COLUMN resource_schedules.closing_time IS 'Local closing time (24:00 allowed); slots end by it.';

CREATE TABLE price_rules (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    resource_id uuid NOT NULL REFERENCES resources(id),
    day_type    text NOT NULL CHECK (day_type IN ('WEEKDAY', 'WEEKEND', 'HOLIDAY')),
    start_time  time NOT NULL,
    end_time    time NOT NULL CHECK (end_time > start_time),
    price       numeric(12, 2) NOT NULL CHECK (price > 0),
    currency    char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT price_rules_no_overlap EXCLUDE USING gist
        (resource_id WITH =, day_type WITH =, timerange(start_time, end_time) WITH &&)
);
COMMENT ON TABLE price_rules IS 'Price of one slot of a court by day type and start time.';
COMMENT ON COLUMN price_rules.resource_id IS 'The court.';
COMMENT ON COLUMN price_rules.day_type IS 'WEEKDAY (Mon-Fri), WEEKEND (Sat, Sun) or HOLIDAY (venue holidays).';
COMMENT ON COLUMN price_rules.start_time IS 'A rule covers slots with start_time <= slot start < end_time.';
COMMENT ON COLUMN price_rules.end_time IS 'Exclusive end of the covered start times (24:00 allowed).';
COMMENT ON COLUMN price_rules.price IS 'Price of one whole slot, exact.';
COMMENT ON COLUMN price_rules.currency IS 'ISO 4217 code, three upper-case letters.';
COMMENT ON COLUMN price_rules.created_at IS 'When the rule was added.';
CREATE INDEX price_rules_resource_idx ON price_rules (resource_id, start_time);

CREATE TABLE resource_images (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    resource_id uuid NOT NULL REFERENCES resources(id),
    url         text NOT NULL CHECK (btrim(url) <> ''),
    public_id   text NOT NULL CHECK (btrim(public_id) <> ''),
    created_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE resource_images IS 'Pictures of a court, hosted on an external CDN.';
COMMENT ON COLUMN resource_images.resource_id IS 'The court shown.';
COMMENT ON COLUMN resource_images.url IS 'Full URL of the picture on the CDN.';
COMMENT ON COLUMN resource_images.public_id IS 'CDN public identifier, used to delete it there.';
COMMENT ON COLUMN resource_images.created_at IS 'When it was added; images are listed in this order.';
CREATE INDEX resource_images_resource_idx ON resource_images (resource_id, created_at);
