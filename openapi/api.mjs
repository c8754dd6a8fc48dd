// api.mjs: what the route tables of cgi-bin/ cannot say about each route, written by hand.
//
// openapi/build.mjs reads the route tables (method, path, caller, body, idempotency) and
// merges each route with its entry here into the OpenAPI 3.1 document; it fails when a route
// has no entry or an entry names no route. So this file says, per route: summary, query
// parameters, request body, success answers and the stable problem codes of the handler and
// of the SQL functions it calls (the codes every route of its kind can answer, such as 401
// INVALID_TOKEN or 413 BODY_TOO_LARGE, are added by build.mjs from the table).

const ref = (name) => ({ $ref: `#/components/schemas/${name}` });
const list = (name) => ({ type: 'array', items: ref(name) });
// null allowed too (an enum lists it as well: enum is checked whatever the type)
const nullable = (schema) => ({
	...schema, type: [schema.type, 'null'], ...(schema.enum ? { enum: [...schema.enum, null] } : {}),
});
const uuid = { type: 'string', format: 'uuid' };
const date = { type: 'string', format: 'date', example: '2026-12-01' };
const time = {
	type: 'string',
	pattern: '^(([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]|24:00:00)$',
	description: 'Time of day HH:MM:SS, 24-hour; 24:00:00 is the end of the day.',
	example: '18:30:00',
};
const timestamp = { type: 'string', format: 'date-time', description: 'UTC, ISO 8601 with milliseconds.' };
const text = { type: 'string', minLength: 1, maxLength: 2000, pattern: '\\S' };
const money = { type: 'number', exclusiveMinimum: 0, description: 'Exact, at most two decimals.' };
const currency = { type: 'string', pattern: '^[A-Z]{3}$', example: 'EUR' };
const latitude = { type: 'number', minimum: -90, maximum: 90 };
const longitude = { type: 'number', minimum: -180, maximum: 180 };
const enumOf = (...values) => ({ type: 'string', enum: values });

const STATUS = enumOf('ACTIVE', 'SUSPENDED', 'PENDING_APPROVAL', 'REJECTED');
const FORMAT = enumOf('TWO_VS_TWO', 'ONE_VS_ONE', 'AMERICANO');
const SKILL = enumOf('BEGINNER', 'INTERMEDIATE', 'ADVANCED', 'PROFESSIONAL');
const TEAM = enumOf('TEAM_A', 'TEAM_B');
const MATCH_STATUS = enumOf('PENDING_PAYMENT', 'OPEN', 'MATCHED', 'CONFIRMED', 'COMPLETED',
	'CANCELLED');

// the venue's booking rules, checked on a booking and on a join (sql/areas/55_fair_use.sql)
const BOOKING_RULES = ['OUTSIDE_BOOKING_WINDOW', 'TOO_SHORT_NOTICE', 'UPCOMING_LIMIT', 'DAILY_LIMIT',
	'WEEKLY_LIMIT'];

const STAFF_ROLE = enumOf('MANAGER', 'DESK');
const MY_ROLE = { ...enumOf('OWNER', 'MANAGER', 'DESK'), description: 'The caller\'s role at the venue: its owner, or its staff.' };
const BLOCK_KIND = enumOf('MAINTENANCE', 'LESSON', 'EVENT', 'DESK');
const HOURS = { type: 'number', minimum: 0, description: 'Hours, two decimals.' };

const object = (properties, required = Object.keys(properties), extra = {}) => ({
	type: 'object', properties, required, additionalProperties: false, ...extra,
});

const MATCH_REQUEST = {
	id: uuid,
	resourceId: uuid,
	bookingDate: date,
	startTime: time,
	endTime: time,
	format: FORMAT,
	skillLevel: SKILL,
	visibility: { ...enumOf('PUBLIC', 'PRIVATE'), description: 'PUBLIC: in the open-match feed; PRIVATE: only by its link or an invitation.' },
	competitive: { type: 'boolean', description: 'true: only players of its level join from the feed; false: a friendly match.' },
	status: MATCH_STATUS,
	invitationToken: nullable({ ...uuid, description: 'The shareable link\'s token; shown to the match\'s players only (null in the open-match feed).' }),
	availableSlots: { type: 'integer', minimum: 0, description: 'Places no player takes and no open offer holds.' },
	pricePerPlayer: { type: 'number', minimum: 0 },
	currency,
	courtPrice: { type: 'number', minimum: 0 },
	organizerId: uuid,
	customMessage: nullable({ type: 'string' }),
	expiresAt: nullable({ ...timestamp, description: 'End of the payment window while PENDING_PAYMENT.' }),
	createdAt: timestamp,
	players: list('MatchPlayer'),
	waitlistLength: { type: 'integer', minimum: 0, description: 'Players on the waiting list of the match.' },
	result: nullable(object({
		sets: { type: 'array', items: { type: 'array', items: { type: 'integer', minimum: 0 }, minItems: 2, maxItems: 2 }, description: 'The games of each set, TEAM_A\'s first.' },
		winner: TEAM,
		status: enumOf('PENDING', 'CONFIRMED', 'DISPUTED'),
	}, undefined, { description: 'The reported result, null until one is.' })),
};
const SETS = { type: 'array', minItems: 1, maxItems: 5, items: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 99 }, minItems: 2, maxItems: 2 }, description: 'The games of each set, TEAM_A\'s first: every set has a winner, and one team wins more sets.' };

export const schemas = {
	Image: object({ id: uuid, url: { type: 'string', description: 'Absolute http or https URL on the CDN.' }, publicId: { type: 'string' } }),
	Venue: object({
		id: uuid,
		ownerId: uuid,
		name: { type: 'string' },
		description: nullable({ type: 'string' }),
		street: { type: 'string' },
		city: { type: 'string' },
		country: { type: 'string' },
		postalCode: nullable({ type: 'string' }),
		latitude,
		longitude,
		timezone: { type: 'string', description: 'IANA time zone of the venue; slots are in its local time.', example: 'Europe/Madrid' },
		status: STATUS,
		rejectReason: nullable({ type: 'string', description: 'Set while the status is REJECTED.' }),
		images: list('Image'),
		resourceCount: { type: 'integer', minimum: 0, description: 'Courts of the venue (players see the ACTIVE ones counted).' },
		createdAt: timestamp,
		updatedAt: timestamp,
		distanceKm: { type: 'number', minimum: 0, description: 'Only in GET /api/venues with a centre: kilometres from it.' },
	}, ['id', 'ownerId', 'name', 'description', 'street', 'city', 'country', 'postalCode',
		'latitude', 'longitude', 'timezone', 'status', 'rejectReason', 'images', 'resourceCount',
		'createdAt', 'updatedAt']),
	VenueInput: object({
		name: text,
		description: nullable({ type: 'string', maxLength: 2000 }),
		street: text,
		city: text,
		country: text,
		postalCode: nullable({ type: 'string', maxLength: 2000 }),
		latitude,
		longitude,
		timezone: nullable({ ...text, description: 'IANA time zone; on create the configured default when absent, on update kept when absent.' }),
	}, ['name', 'street', 'city', 'country', 'latitude', 'longitude'], { additionalProperties: true }),
	ImageInput: object({
		url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2000, description: 'Absolute http or https URL of the image on the CDN.' },
		publicId: text,
	}, ['url', 'publicId'], { additionalProperties: true }),
	Schedule: object({
		dayOfWeek: enumOf('MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'),
		openingTime: nullable({ ...time }),
		closingTime: nullable({ ...time }),
	}),
	ScheduleInput: object({
		dayOfWeek: enumOf('MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'),
		openingTime: nullable({ ...time, description: 'Both times null or absent close the day; both given open it, closing after opening.' }),
		closingTime: nullable({ ...time }),
	}, ['dayOfWeek'], { additionalProperties: true }),
	PriceRule: object({
		id: uuid,
		dayType: enumOf('WEEKDAY', 'WEEKEND', 'HOLIDAY'),
		startTime: time,
		endTime: time,
		price: money,
		currency,
	}),
	PriceRuleInput: object({
		dayType: enumOf('WEEKDAY', 'WEEKEND', 'HOLIDAY'),
		startTime: time,
		endTime: { ...time, description: 'After startTime; 24:00:00 allowed.' },
		price: { ...money, exclusiveMaximum: 10000000000 },
		currency,
	}, undefined, { additionalProperties: true }),
	Resource: object({
		id: uuid,
		venueId: uuid,
		name: { type: 'string' },
		description: nullable({ type: 'string' }),
		type: enumOf('PADEL_COURT', 'TENNIS_COURT'),
		slotDurationMinutes: { type: 'integer', minimum: 15, maximum: 240, multipleOf: 5 },
		status: STATUS,
		rejectReason: nullable({ type: 'string' }),
		schedules: list('Schedule'),
		priceRules: list('PriceRule'),
		images: list('Image'),
		createdAt: timestamp,
		updatedAt: timestamp,
	}),
	ResourceInput: object({
		name: text,
		description: nullable({ type: 'string', maxLength: 2000 }),
		type: enumOf('PADEL_COURT', 'TENNIS_COURT'),
		slotDurationMinutes: { type: 'integer', minimum: 15, maximum: 240, multipleOf: 5 },
	}, ['name', 'type', 'slotDurationMinutes'], { additionalProperties: true }),
	BookingRules: object(Object.fromEntries([
		['maxUpcomingPerPlayer', 1000], ['maxPerPlayerPerDay', 1000], ['maxPerPlayerPerWeek', 1000],
		['bookingWindowDays', 366], ['minNoticeMinutes', 43200],
	].map(([name, max]) => [name, { type: ['integer', 'null'], minimum: 1, maximum: max, description: 'null: no limit.' }]))),
	BookingRulesInput: object(Object.fromEntries([
		['maxUpcomingPerPlayer', 1000], ['maxPerPlayerPerDay', 1000], ['maxPerPlayerPerWeek', 1000],
		['bookingWindowDays', 366], ['minNoticeMinutes', 43200],
	].map(([name, max]) => [name, { type: ['integer', 'null'], minimum: 1, maximum: max, description: 'Absent or null: no limit.' }])),
	[], { additionalProperties: true }),
	Holiday: object({ date, name: { type: 'string' } }),
	CourtBlock: object({
		id: uuid,
		resourceId: uuid,
		date,
		startTime: time,
		endTime: { ...time, description: 'HH:mm:ss; 24:00:00 is the end of the day.' },
		kind: BLOCK_KIND,
		note: nullable({ type: 'string' }),
		customerName: nullable({ type: 'string', description: 'DESK: the walk-in customer.' }),
		amount: nullable({ ...money, description: 'DESK: paid at the desk, exact.' }),
		currency: nullable(currency),
		createdAt: timestamp,
	}),
	CourtBlockInput: object({
		date,
		startTime: time,
		endTime: { ...time, description: 'After startTime; 24:00:00 is the end of the day.' },
		kind: BLOCK_KIND,
		note: nullable({ ...text, description: 'Told to the players of the matches the block calls off.' }),
		customerName: nullable({ ...text, description: 'DESK only.' }),
		amount: nullable({ ...money, description: 'DESK only: paid at the desk, in the court\'s currency.' }),
		weeks: nullable({ type: 'integer', minimum: 1, maximum: 52, description: 'The same block on that weekday for that many weeks, all or none; the answer is then the array of the blocks.' }),
		cancelMatches: nullable({ type: 'boolean', description: 'true: the matches in the way are called off by the club, every paid share refunded in full and every player told with the note.' }),
	}, ['date', 'startTime', 'endTime', 'kind'], { additionalProperties: true }),
	DaySheet: object({
		venueId: uuid,
		date,
		timeZone: { type: 'string', example: 'Europe/Madrid' },
		hoursOpen: HOURS,
		hoursFree: { ...HOURS, description: 'Open hours covered by no match and no block.' },
		courts: { type: 'array', items: object({
			resourceId: uuid,
			name: { type: 'string' },
			hoursOpen: HOURS,
			hoursFree: HOURS,
			items: { type: 'array', items: { oneOf: [ref('DaySheetMatch'), ref('DaySheetBlock')] } },
		}) },
	}),
	DaySheetMatch: object({
		kind: enumOf('MATCH'),
		matchRequestId: uuid,
		status: MATCH_STATUS,
		startTime: time,
		endTime: time,
		format: FORMAT,
		placesTaken: { type: 'integer', minimum: 0 },
		placesFree: { type: 'integer', minimum: 0 },
		amountPaid: { type: 'number', description: 'Shares paid less refunds, exact.' },
		amountOwed: { type: 'number', minimum: 0, description: 'What of the court price is not paid yet.' },
		currency,
		checkedIn: { type: 'integer', minimum: 0, description: 'Players checked in.' },
		players: { type: 'array', items: object({
			playerId: uuid,
			displayName: nullable({ type: 'string' }),
			team: TEAM,
			role: enumOf('ORGANIZER', 'PLAYER'),
			checkedIn: { type: 'boolean' },
		}) },
	}),
	DaySheetBlock: object({
		kind: BLOCK_KIND,
		blockId: uuid,
		startTime: time,
		endTime: time,
		note: nullable({ type: 'string' }),
		customerName: nullable({ type: 'string' }),
		amount: nullable(money),
		currency: nullable(currency),
	}),
	ReportFigures: object({
		date: { ...date, description: 'Absent from the total.' },
		hoursOpen: HOURS,
		hoursBooked: { ...HOURS, description: 'Matches not cancelled: live and played.' },
		hoursBlocked: object({ MAINTENANCE: HOURS, LESSON: HOURS, EVENT: HOURS, DESK: HOURS }),
		occupancy: { type: 'number', minimum: 0, description: 'Hours in use (matches, DESK, LESSON and EVENT blocks) over hours available (open less MAINTENANCE), four decimals; 0 when none is available.' },
		paid: { type: 'number', description: 'Shares paid for the day\'s matches, whenever paid.' },
		refunded: { type: 'number', description: 'Refunds of the day\'s matches, whenever decided.' },
		net: { type: 'number' },
		deskRevenue: { type: 'number', description: 'Paid at the desk for the day\'s DESK blocks.' },
		matchesPlayed: { type: 'integer', minimum: 0 },
		matchesCancelled: { type: 'integer', minimum: 0, description: 'Holds never paid not counted.' },
		noShows: { type: 'integer', minimum: 0 },
	}, ['hoursOpen', 'hoursBooked', 'hoursBlocked', 'occupancy', 'paid', 'refunded', 'net', 'deskRevenue', 'matchesPlayed', 'matchesCancelled', 'noShows']),
	VenueReport: object({
		venueId: uuid,
		from: date,
		to: date,
		currency: nullable(currency),
		days: list('ReportFigures'),
		total: ref('ReportFigures'),
	}),
	OwnerCancelInput: object({ reason: { ...text, description: 'Told to every player of the match.' } }, undefined, { additionalProperties: true }),
	VenueStaff: object({
		venueId: uuid,
		userId: uuid,
		subject: { type: 'string', description: 'The identity provider\'s sub the owner named them by.' },
		role: STAFF_ROLE,
		addedBy: uuid,
		createdAt: timestamp,
		updatedAt: timestamp,
	}),
	VenueStaffInput: object({ role: STAFF_ROLE }, undefined, { additionalProperties: true }),
	AuditEntry: object({
		id: { type: 'integer', minimum: 1 },
		userId: uuid,
		subject: { type: 'string', description: 'Who: the identity provider\'s sub.' },
		role: enumOf('OWNER', 'MANAGER', 'DESK'),
		madeAt: timestamp,
		method: enumOf('POST', 'PUT', 'PATCH', 'DELETE'),
		route: { type: 'string', description: 'What: the route\'s pattern.', example: '/api/owner/resources/{resourceId}/blocks' },
		path: { type: 'string', description: 'On what: the path, with its ids.' },
		status: { type: 'integer', minimum: 200, maximum: 299 },
		request: { description: 'The JSON body sent, or null.' },
	}),
	HolidayInput: object({ date, name: text }, undefined, { additionalProperties: true }),
	Slot: object({
		startTime: time,
		endTime: time,
		available: { type: 'boolean' },
		price: nullable({ type: 'number', minimum: 0, description: 'Price of the slot; null when no price rule covers it (not bookable).' }),
		currency: nullable({ ...currency }),
	}),
	SearchResult: object({
		resourceId: uuid,
		resourceName: { type: 'string' },
		resourceType: enumOf('PADEL_COURT', 'TENNIS_COURT'),
		venueId: uuid,
		venueName: { type: 'string' },
		venueCity: { type: 'string' },
		venueLatitude: latitude,
		venueLongitude: longitude,
		distanceKm: { type: 'number', minimum: 0 },
		startTime: time,
		endTime: time,
		price: { type: 'number', minimum: 0, description: 'Total court price.' },
		currency,
		eligiblePlayersNearby: { type: 'integer', minimum: 0 },
	}),
	MatchPlayer: object({
		playerId: uuid,
		team: TEAM,
		role: enumOf('ORGANIZER', 'PLAYER'),
		joinedAt: timestamp,
		checkedIn: { type: 'boolean' },
		checkedInAt: nullable({ ...timestamp }),
	}),
	MatchRequest: object({
		...MATCH_REQUEST,
		myPayment: nullable(object({
			status: { ...enumOf('PENDING', 'PAID', 'CANCELLED', 'REFUND_PENDING', 'REFUNDED', 'REFUND_FAILED'), description: 'PENDING until the payment provider confirms it (or, with PAYMENT_PROVIDER=none, the organizer\'s confirm-payment); CANCELLED: the place was freed unpaid; REFUND_PENDING while the provider pays it back, then REFUNDED (or REFUND_FAILED, for an administrator).' },
			amount: { type: 'number', minimum: 0, description: 'The share: the price per player.' },
			currency,
			expiresAt: nullable({ ...timestamp, description: 'While PENDING: the place is freed if the payment is not confirmed by then.' }),
			clientSecret: nullable({ type: 'string', description: 'While PENDING with PAYMENT_PROVIDER=stripe: the PaymentIntent\'s client secret, for Stripe.js to confirm the card with (stripe.confirmPayment); null otherwise.' }),
		}, undefined, { description: 'The caller\'s own share of the match; null when it has none.' })),
	}),
	Payment: object({
		id: uuid,
		kind: enumOf('PAYMENT', 'REFUND'),
		matchRequestId: uuid,
		playerId: { ...uuid, description: 'Who pays, or is paid back.' },
		amount: { type: 'number', minimum: 0 },
		currency,
		status: { ...enumOf('PENDING', 'PAID', 'CANCELLED', 'REFUNDED', 'FAILED'), description: 'A payment: PENDING, PAID or CANCELLED (its place freed unpaid). A refund: PENDING while the provider pays it back, REFUNDED, or FAILED (the provider refused: pay it back by other means).' },
		refundOf: nullable({ ...uuid, description: 'A refund\'s payment.' }),
		provider: nullable({ ...enumOf('stripe'), description: 'The provider that moves this money; null: none (no money taken online).' }),
		providerRef: nullable({ type: 'string', description: 'The provider\'s object: a PaymentIntent (pi_...) or a refund (re_...).' }),
		providerStatus: nullable({ type: 'string', description: 'Its status as the provider last gave it.' }),
		attempts: { type: 'integer', minimum: 0, description: 'Calls the sweeper made to the provider for it.' },
		lastError: nullable({ type: 'string', description: 'Why the last call failed, or why the provider refused.' }),
		createdAt: timestamp,
		updatedAt: timestamp,
		issues: {
			type: 'array', description: 'What an administrator must look at, oldest first.',
			items: object({
				kind: enumOf('AMOUNT_MISMATCH', 'REFUND_FAILED', 'UNKNOWN_CHARGE'),
				detail: { type: 'object', description: 'What the provider said, and what the ledger expected.' },
				createdAt: timestamp,
				resolvedAt: nullable({ ...timestamp }),
				resolvedBy: nullable({ ...uuid, description: 'The administrator who settled it.' }),
				resolution: nullable({ type: 'string', description: 'What was done about it.' }),
			}),
		},
	}),
	MatchView: object(MATCH_REQUEST, undefined, { description: 'A match request as a player outside it sees it: no invitation token, no share.' }),
	StripeEvent: object({
		id: { type: 'string', description: 'The event\'s id (evt_...): each is applied once.' },
		type: { type: 'string', description: 'payment_intent.succeeded, payment_intent.payment_failed, payment_intent.canceled, refund.created, refund.updated, refund.failed are applied; any other is answered and recorded.' },
		data: object({ object: { type: 'object', description: 'The PaymentIntent or refund as it was then.' } }, ['object'], { additionalProperties: true }),
	}, ['id', 'type', 'data'], { additionalProperties: true, description: 'A Stripe event, exactly as Stripe sends it.' }),
	WebhookReceipt: object({
		received: { type: 'boolean', const: true },
		outcome: { ...enumOf('PAID', 'ALREADY_PAID', 'AMOUNT_MISMATCH', 'LATE_PAYMENT', 'REFUNDED', 'REFUND_FAILED', 'RECORDED', 'UNKNOWN', 'IGNORED', 'DUPLICATE'), description: 'What the event did: PAID (the share is paid), ALREADY_PAID, AMOUNT_MISMATCH (another amount or currency than the share: an issue for an administrator, the share still pending), LATE_PAYMENT (paid after the place was freed: refunded in full), REFUNDED, REFUND_FAILED, RECORDED (a status that pays nothing), UNKNOWN (no share has this object), IGNORED (a type the service does not use), DUPLICATE (applied before).' },
	}),
	OpenMatch: object({
		...MATCH_REQUEST,
		distanceKm: { type: 'number', minimum: 0, description: 'From the point searched to the venue.' },
		freePlaces: object({ TEAM_A: { type: 'integer', minimum: 0 }, TEAM_B: { type: 'integer', minimum: 0 } }, undefined, { description: 'Places of each team no player takes and no offer holds.' }),
	}),
	MatchRequestInput: object({
		resourceId: uuid,
		bookingDate: date,
		startTime: time,
		slotDurationMinutes: { type: 'integer', minimum: 1, maximum: 1440, description: 'Must be the court\'s slot duration.' },
		format: FORMAT,
		skillLevel: SKILL,
		customMessage: nullable({ type: 'string', maxLength: 500 }),
		searchLat: latitude,
		searchLng: longitude,
		searchRadiusKm: nullable({ type: 'number', exclusiveMinimum: 0, maximum: 100, default: 10 }),
		visibility: nullable({ ...enumOf('PUBLIC', 'PRIVATE'), default: 'PUBLIC', description: 'Fixed once paid.' }),
		competitive: nullable({ type: 'boolean', default: true, description: 'false: a friendly match, open to any level. Fixed once paid.' }),
	}, ['resourceId', 'bookingDate', 'startTime', 'slotDurationMinutes', 'format', 'skillLevel',
		'searchLat', 'searchLng'], { additionalProperties: true }),
	HandoverInput: object({
		substitutePlayerId: nullable({ ...uuid, description: 'A player to hand the freed place to first: they get a HANDOVER invitation for it. Another player than the caller, in no match at that time.' }),
	}, [], { additionalProperties: true, description: 'Optional: without a body (or with a null substitute) the place goes to the waiting list, and after an absence substitutes are invited.' }),
	WaitlistInput: object({ team: enumOf('TEAM_A', 'TEAM_B', 'ANY') }, undefined, { additionalProperties: true }),
	WaitlistEntry: object({
		matchRequestId: uuid,
		playerId: uuid,
		team: enumOf('TEAM_A', 'TEAM_B', 'ANY'),
		position: { type: 'integer', minimum: 1, description: '1 is offered the next place of its team.' },
		joinedAt: timestamp,
	}),
	SeriesInput: {
		allOf: [ref('MatchRequestInput'), object({
			weeks: { type: 'integer', minimum: 1, maximum: 26, description: 'How many weeks: bookingDate and the same weekday of each week after it.' },
		}, ['weeks'], { additionalProperties: true })],
	},
	Series: object({
		id: uuid,
		created: { ...list('MatchRequest'), description: 'One match request per date booked, oldest first, each with its own payment hold; pay each with its confirm-payment.' },
		skipped: {
			type: 'array', description: 'The dates not booked, oldest first, with the code a booking of that date alone would have been refused with.',
			items: object({
				bookingDate: date,
				code: { type: 'string', enum: ['SLOT_NOT_OFFERED', 'SLOT_IN_PAST', 'NOT_BOOKABLE', 'SLOT_TAKEN', 'SLOT_BLOCKED', ...BOOKING_RULES] },
			}),
		},
	}),
	TeamInput: object({ team: TEAM }, undefined, { additionalProperties: true }),
	PlaceRequestInput: object({
		team: nullable({ ...enumOf('TEAM_A', 'TEAM_B', 'ANY'), default: 'ANY', description: 'The team asked for.' }),
		message: nullable({ type: 'string', maxLength: 500, description: 'The requester\'s words to the players.' }),
	}, [], { additionalProperties: true, description: 'Optional: without a body the request is for either team, with no message.' }),
	PlaceRequest: object({
		id: uuid,
		matchRequestId: uuid,
		playerId: { ...uuid, description: 'The requester.' },
		displayName: nullable({ type: 'string' }),
		effectiveSkillLevel: nullable({ ...SKILL, description: 'The requester\'s effective level (see Player).' }),
		rating: { type: 'number', description: 'The requester\'s Glicko-2 rating, two decimals.' },
		team: enumOf('TEAM_A', 'TEAM_B', 'ANY'),
		message: nullable({ type: 'string' }),
		status: { ...enumOf('PENDING', 'REJECTED', 'APPROVED', 'CLOSED'), description: 'REJECTED while a player now in the match rejects it (who may turn it into an approve while the request is open); APPROVED once every player now in the match approved (final); CLOSED: not approved before the match started, was confirmed or ended, or the requester took a place by the link meanwhile.' },
		answers: {
			type: 'array', description: 'The answers of the players now in the match, oldest first.',
			items: object({ playerId: uuid, answer: enumOf('APPROVE', 'REJECT'), answeredAt: timestamp }),
		},
		awaiting: { type: 'array', items: uuid, description: 'While the request is open: the players now in the match who have not answered; else empty.' },
		invitationId: nullable({ ...uuid, description: 'Once approved: the PLACE invitation granted, when a place was free.' }),
		waitlisted: { type: 'boolean', description: 'Once approved with no place free: the requester was put on the waiting list.' },
		createdAt: timestamp,
		updatedAt: timestamp,
		match: ref('MatchView'),
	}),
	Invitation: object({
		id: uuid,
		matchRequestId: uuid,
		kind: { ...enumOf('INVITATION', 'OFFER', 'HANDOVER', 'PLACE'), description: 'OFFER: a freed place offered to the first player on the waiting list, theirs alone until expiresAt. HANDOVER: a freed place handed to this player by the one who left it, theirs alone until expiresAt. PLACE: a place granted to this player\'s approved place request, theirs alone until expiresAt.' },
		status: { ...enumOf('PENDING', 'ACCEPTED', 'DECLINED', 'EXPIRED'), description: 'A lapsed offer reads EXPIRED.' },
		team: nullable({ ...TEAM, description: 'An offer\'s, hand-over\'s or granted place\'s team: accept it into this team.' }),
		expiresAt: nullable({ ...timestamp, description: 'An offer\'s, hand-over\'s or granted place\'s end; null for an invitation.' }),
		sentAt: timestamp,
		respondedAt: nullable({ ...timestamp }),
		bookingDate: date,
		startTime: time,
		endTime: time,
		format: FORMAT,
		skillLevel: SKILL,
		matchStatus: MATCH_STATUS,
		availableSlots: { type: 'integer', minimum: 0 },
		pricePerPlayer: { type: 'number', minimum: 0 },
		currency,
		customMessage: nullable({ type: 'string' }),
		resourceName: { type: 'string' },
		venueName: { type: 'string' },
		venueCity: { type: 'string' },
	}),
	Player: object({
		playerId: uuid,
		displayName: nullable({ type: 'string' }),
		skillLevel: nullable({ ...SKILL }),
		homeLatitude: nullable({ ...latitude }),
		homeLongitude: nullable({ ...longitude }),
		matchNotifications: { type: 'boolean' },
		reliabilityScore: { type: 'integer' },
		noShowCount: { type: 'integer', minimum: 0 },
		bannedUntil: nullable({ ...timestamp }),
		createdAt: timestamp,
		updatedAt: timestamp,
		rating: { type: 'number', description: 'Glicko-2 rating, two decimals: from the declared level (1200, 1500, 1800, 2100) until results move it.' },
		ratingDeviation: { type: 'number', minimum: 0, maximum: 350, description: 'Its deviation, two decimals: 350 at the start, growing with every 30 days without a rated match.' },
		ratedMatches: { type: 'integer', minimum: 0 },
		effectiveSkillLevel: nullable({ ...SKILL, description: 'The rating\'s band once ratedMatches >= 5 and the deviation is below 150; the declared level before that.' }),
	}),
	ResultInput: object({ sets: SETS }, undefined, { additionalProperties: true }),
	DisputeInput: object({ reason: { type: 'string', minLength: 1, maxLength: 500 } }, undefined, { additionalProperties: true }),
	Result: object({
		sets: SETS,
		winner: TEAM,
		status: enumOf('PENDING', 'CONFIRMED', 'DISPUTED'),
		reportedBy: uuid,
		reportedAt: timestamp,
	}),
	PlayerResult: object({
		matchRequestId: uuid,
		bookingDate: date,
		team: TEAM,
		sets: SETS,
		winner: TEAM,
		won: { type: 'boolean' },
		status: enumOf('PENDING', 'CONFIRMED', 'DISPUTED'),
		competitive: { type: 'boolean' },
		reportedAt: timestamp,
		ratingBefore: nullable({ type: 'number', description: 'Null until the result moved the rating (a confirmed competitive result).' }),
		ratingAfter: nullable({ type: 'number' }),
		deviationBefore: nullable({ type: 'number' }),
		deviationAfter: nullable({ type: 'number' }),
	}),
	PlayerInput: object({
		displayName: nullable({ ...text, maxLength: 100 }),
		skillLevel: nullable({ ...SKILL }),
		homeLatitude: nullable({ ...latitude, description: 'Given with homeLongitude or not at all.' }),
		homeLongitude: nullable({ ...longitude }),
		matchNotifications: { type: ['boolean', 'null'], default: true },
	}, [], { additionalProperties: true, description: 'Replaces the editable fields: an absent field is null (matchNotifications: true). reliabilityScore, noShowCount and bannedUntil are ignored.' }),
	CalendarFeed: object({
		url: { type: 'string', format: 'uri', description: 'The secret feed URL (`…/api/calendar/{secret}.ics`) to subscribe to in a calendar app; anyone holding it can read the feed, so it is replaced by rotating.' },
	}),
	Notification: object({
		id: uuid,
		type: { type: 'string', example: 'MATCH_CANCELLED' },
		payload: { type: 'object' },
		createdAt: timestamp,
		readAt: nullable({ ...timestamp }),
	}),
	RejectInput: object({ reason: text }, undefined, { additionalProperties: true }),
	ResolveInput: object({ note: { type: 'string', minLength: 1, maxLength: 2000, description: 'What was done about it: how the money was paid back or returned.' } }, undefined, { additionalProperties: true }),
	Health: object({ status: enumOf('UP', 'DOWN') }),
	Info: object({
		name: { type: 'string' },
		description: { type: 'string' },
		version: { type: 'string' },
		build: { type: 'string', description: 'Revision the programs were built from.' },
	}),
	FieldError: object({
		field: { type: 'string', description: 'Body field, query or path parameter, or header (Idempotency-Key).' },
		message: { type: 'string' },
	}),
	Problem: object({
		type: { type: 'string', format: 'uri', description: 'https://courts.example/problems/ and the code in lower case with dashes.' },
		title: { type: 'string', description: 'The reason phrase of the status.' },
		status: { type: 'integer', minimum: 400, maximum: 599 },
		detail: { type: 'string' },
		instance: { type: 'string', description: 'The request path (absent from the answers Apache gives itself).' },
		code: { type: 'string', pattern: '^[A-Z][A-Z0-9_]*$', description: 'Stable code: the one field to branch on.' },
		requestId: { type: 'string', description: 'Quote it when reporting a 5xx (absent from the answers Apache gives itself).' },
		errors: list('FieldError'),
		matchRequestIds: { type: 'array', items: uuid, description: 'MATCHES_IN_THE_WAY, MATCH_STARTED: the matches at the time of a block.' },
	}, ['type', 'title', 'status', 'detail', 'code', 'errors'], {
		description: 'RFC 9457 problem details, with the stable `code` and every field error in `errors`.',
	}),
};

// the owner lists' items: the object with the caller's role at its venue
for (const name of ['Venue', 'Resource'])
	schemas[`Owner${name}`] = {
		...schemas[name],
		properties: { ...schemas[name].properties, myRole: MY_ROLE },
		required: [...schemas[name].required, 'myRole'],
	};

// query parameters
const q = (name, schema, description, required = false) => ({ name, in: 'query', required, description, schema });
const paging = [
	q('limit', { type: 'integer', minimum: 1, maximum: 500, default: 100 }, 'Items per page.'),
	q('cursor', { type: 'string' }, 'Opaque: take it from the Link header of the previous page.'),
];
const statusFilter = q('status', STATUS, 'Only items of this status.');

// success answers: { status: [schema name or schema, description] }; 204 and 304 have no body
const page = (name) => ({ schema: list(name), paged: true });

export const routes = {
	// ---- health (health.c) ----
	'GET /actuator/health': {
		tag: 'health', summary: 'Health: whether the database answers',
		ok: { 200: { schema: ref('Health') }, 503: { schema: ref('Health'), description: 'DOWN: the database does not answer.' } },
	},
	'GET /actuator/info': {
		tag: 'health', summary: 'Name, version and build of the service', ok: { 200: { schema: ref('Info') } },
	},

	// ---- owner venues (owner.c) ----
	'GET /api/owner/venues': {
		tag: 'owner venues', summary: 'The venues the caller owns or staffs, oldest first, with the caller\'s role', query: paging,
		ok: { 200: page('OwnerVenue'), 304: { description: 'The If-None-Match tag is still the answer.' } },
		etag: true,
	},
	'POST /api/owner/venues': {
		tag: 'owner venues', summary: 'Create a venue (PENDING_APPROVAL until an administrator approves it)',
		body: 'VenueInput', ok: { 201: { schema: ref('Venue') } },
		problems: { 409: ['PENDING_LIMIT'] },
	},
	'PUT /api/owner/venues/{venueId}': {
		tag: 'owner venues', summary: 'Replace a venue\'s fields (a REJECTED venue is resubmitted)',
		body: 'VenueInput', ok: { 200: { schema: ref('Venue') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'PATCH /api/owner/venues/{venueId}/suspend': {
		tag: 'owner venues', summary: 'Suspend an ACTIVE venue', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE'] },
	},
	'PATCH /api/owner/venues/{venueId}/reactivate': {
		tag: 'owner venues', summary: 'Reactivate a venue the owner suspended', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['SUSPENDED_BY_ADMIN', 'INVALID_STATE'] },
	},
	'POST /api/owner/venues/{venueId}/images': {
		tag: 'owner venues', summary: 'Add an image (already uploaded to the CDN) to a venue',
		body: 'ImageInput', ok: { 200: { schema: ref('Venue') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'DELETE /api/owner/venues/{venueId}/images/{imageId}': {
		tag: 'owner venues', summary: 'Remove an image of a venue', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'] },
	},
	'GET /api/owner/venues/{venueId}/booking-rules': {
		tag: 'owner venues', summary: 'The venue\'s fair-use booking rules',
		ok: { 200: { schema: ref('BookingRules') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'PUT /api/owner/venues/{venueId}/booking-rules': {
		tag: 'owner venues', summary: 'Set the venue\'s booking rules (absent or null: no limit)',
		body: 'BookingRulesInput', ok: { 200: { schema: ref('BookingRules') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'GET /api/owner/venues/{venueId}/holidays': {
		tag: 'owner venues', summary: 'The venue\'s holidays by date (HOLIDAY prices apply)',
		ok: { 200: { schema: list('Holiday') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'POST /api/owner/venues/{venueId}/holidays': {
		tag: 'owner venues', summary: 'Add a holiday', body: 'HolidayInput',
		ok: { 201: { schema: ref('Holiday') } }, problems: { 404: ['NOT_FOUND'], 409: ['HOLIDAY_EXISTS'] },
	},
	'DELETE /api/owner/venues/{venueId}/holidays/{date}': {
		tag: 'owner venues', summary: 'Remove a holiday', ok: { 204: {} }, problems: { 404: ['NOT_FOUND'] },
	},

	// ---- owner resources (owner.c) ----
	'POST /api/owner/venues/{venueId}/resources': {
		tag: 'owner resources', summary: 'Create a court at a venue (PENDING_APPROVAL)', body: 'ResourceInput',
		ok: { 201: { schema: ref('Resource') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'GET /api/owner/resources': {
		tag: 'owner resources', summary: 'The courts of every venue the caller owns or staffs, with the caller\'s role', query: paging,
		ok: { 200: page('OwnerResource') },
	},
	'PUT /api/owner/resources/{resourceId}/schedules': {
		tag: 'owner resources', summary: 'Set one day of the weekly schedule', body: 'ScheduleInput',
		ok: { 200: { schema: ref('Resource') } }, problems: { 400: ['INVALID_SCHEDULE'], 404: ['NOT_FOUND'] },
	},
	'POST /api/owner/resources/{resourceId}/price-rules': {
		tag: 'owner resources', summary: 'Add a price rule', body: 'PriceRuleInput',
		ok: { 200: { schema: ref('Resource') } }, problems: { 404: ['NOT_FOUND'], 409: ['PRICE_RULE_OVERLAP'] },
	},
	'DELETE /api/owner/resources/{resourceId}/price-rules/{ruleId}': {
		tag: 'owner resources', summary: 'Remove a price rule', ok: { 204: {} }, problems: { 404: ['NOT_FOUND'] },
	},
	'PATCH /api/owner/resources/{resourceId}/suspend': {
		tag: 'owner resources', summary: 'Suspend an ACTIVE court', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE'] },
	},
	'PATCH /api/owner/resources/{resourceId}/reactivate': {
		tag: 'owner resources', summary: 'Reactivate a court the owner suspended', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['SUSPENDED_BY_ADMIN', 'INVALID_STATE'] },
	},
	'POST /api/owner/resources/{resourceId}/images': {
		tag: 'owner resources', summary: 'Add an image to a court', body: 'ImageInput',
		ok: { 200: { schema: ref('Resource') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'DELETE /api/owner/resources/{resourceId}/images/{imageId}': {
		tag: 'owner resources', summary: 'Remove an image of a court (answers the court, as the contract says)',
		ok: { 200: { schema: ref('Resource') } }, problems: { 404: ['NOT_FOUND'] },
	},

	// ---- the club's desk (owner.c) ----
	'POST /api/owner/resources/{resourceId}/blocks': {
		tag: 'owner desk', summary: 'Block a court for a time: maintenance, a lesson, an event, or a walk-in customer paid at the desk',
		description: 'Every slot the block touches is closed: unavailable in the slots, absent from the search, refused to a new match (409 SLOT_BLOCKED). With `weeks`, the same block every week, all or none, answered as an array.',
		body: 'CourtBlockInput',
		ok: { 201: { schema: { oneOf: [ref('CourtBlock'), list('CourtBlock')] } } },
		problems: { 404: ['NOT_FOUND'], 409: ['MATCHES_IN_THE_WAY', 'MATCH_STARTED', 'BLOCK_OVERLAP', 'BLOCK_IN_PAST', 'NO_CURRENCY'] },
	},
	'GET /api/owner/resources/{resourceId}/blocks': {
		tag: 'owner desk', summary: 'A court\'s blocks by date and start',
		query: [q('from', date, 'First date, included.'), q('to', date, 'Last date, included.'), ...paging],
		ok: { 200: page('CourtBlock') }, problems: { 404: ['NOT_FOUND'] },
	},
	'DELETE /api/owner/resources/{resourceId}/blocks/{blockId}': {
		tag: 'owner desk', summary: 'Remove a block: its slots open again', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'] },
	},
	'GET /api/owner/venues/{venueId}/day': {
		tag: 'owner desk', summary: 'The day sheet: every court\'s matches and blocks of a day, hours open and free',
		query: [q('date', date, 'The local date at the venue.', true)],
		ok: { 200: { schema: ref('DaySheet') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'GET /api/owner/venues/{venueId}/report': {
		tag: 'owner desk', summary: 'Revenue and occupancy by day and in total (JSON, or CSV with Accept: text/csv)',
		query: [q('from', date, 'First local date, included.', true), q('to', date, 'Last local date, included; at most 366 days in all.', true),
			q('currency', currency, 'Required when the venue is priced in more than one currency.')],
		ok: { 200: { schema: ref('VenueReport'), also: { 'text/csv': { schema: { type: 'string', description: 'A header row of the JSON\'s names (hoursBlocked.KIND for the hours blocked), a row per day, and a last row whose date says total.' } } } } },
		problems: { 400: ['CURRENCY_REQUIRED'], 404: ['NOT_FOUND'] },
	},
	'POST /api/owner/matches/{matchRequestId}/cancel': {
		tag: 'owner desk', summary: 'Call a match at the venue off: every paid share refunded in full, every player told with the reason',
		body: 'OwnerCancelInput', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['MATCH_STARTED', 'INVALID_STATE'] },
	},
	'POST /api/owner/matches/{matchRequestId}/checkin/{playerId}': {
		tag: 'owner desk', summary: 'Check a player in at the desk (no phone): the GPS check-in\'s window, without the distance',
		ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE', 'CHECKIN_TOO_EARLY', 'CHECKIN_CLOSED'] },
	},

	// ---- a venue's staff (owner.c) ----
	'PUT /api/owner/venues/{venueId}/staff/{subject}': {
		tag: 'venue staff', summary: 'Give a user of the identity provider (by its sub) a role at the venue: MANAGER or DESK (the owner only)',
		description: 'Staff need no role in their token: their rights come from the venue. A MANAGER may do all the owner may on the venue but change its staff, suspend or reactivate it; DESK may read the venue and its day sheet, add and remove DESK blocks and check players in. A sub not seen yet is accepted.',
		body: 'VenueStaffInput', ok: { 200: { schema: ref('VenueStaff'), description: 'The role changed.' }, 201: { schema: ref('VenueStaff'), description: 'A new staff member.' } },
		problems: { 404: ['NOT_FOUND'], 409: ['STAFF_IS_OWNER'] },
	},
	'DELETE /api/owner/venues/{venueId}/staff/{subject}': {
		tag: 'venue staff', summary: 'Take a user off the venue\'s staff (the owner only)', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'] },
	},
	'GET /api/owner/venues/{venueId}/staff': {
		tag: 'venue staff', summary: 'The venue\'s staff, oldest first (owner and managers)', query: paging,
		ok: { 200: page('VenueStaff') }, problems: { 404: ['NOT_FOUND'] },
	},
	'GET /api/owner/venues/{venueId}/audit': {
		tag: 'venue staff', summary: 'Every write made on the venue, newest first: who, when, what, on what (owner and managers)', query: paging,
		ok: { 200: page('AuditEntry') }, problems: { 404: ['NOT_FOUND'] },
	},

	// ---- administration (admin.c) ----
	'GET /api/admin/payments': {
		tag: 'admin', summary: 'The ledger, oldest first: payments and refunds, with the provider\'s word and the issues raised',
		description: '`status=FAILED` lists the refunds the payment provider refused: pay them back by other means (the provider\'s dashboard, the desk), then settle the issue. An issue AMOUNT_MISMATCH is a payment of another amount or currency than its share: the share stays unpaid, and the money is to be refunded at the provider.',
		query: [
			q('status', enumOf('PENDING', 'PAID', 'CANCELLED', 'REFUNDED', 'FAILED'), 'Only rows of this status.'),
			q('kind', enumOf('PAYMENT', 'REFUND'), 'Only payments, or only refunds.'),
			...paging,
		],
		ok: { 200: page('Payment') },
	},
	'POST /api/admin/payments/{paymentId}/resolve': {
		tag: 'admin', summary: 'Settle the open issues of a ledger row, saying what was done',
		description: 'For a FAILED refund once it is paid back by other means, or an AMOUNT_MISMATCH or UNKNOWN_CHARGE once the money is returned from the provider\'s dashboard: its issues are resolved by the caller with the note, and `make reconcile` no longer prints them. The row\'s status does not change.',
		body: 'ResolveInput', ok: { 200: { schema: ref('Payment') } },
		problems: { 404: ['NOT_FOUND'], 409: ['NO_OPEN_ISSUE'] },
	},
	'GET /api/admin/venues': {
		tag: 'admin', summary: 'Venues of any owner, oldest first', query: [statusFilter, ...paging],
		ok: { 200: page('Venue') },
	},
	'GET /api/admin/venues/{venueId}': {
		tag: 'admin', summary: 'A venue, whatever its status', ok: { 200: { schema: ref('Venue') } },
		problems: { 404: ['NOT_FOUND'] },
	},
	'PATCH /api/admin/venues/{venueId}/approve': {
		tag: 'admin', summary: 'Approve a PENDING_APPROVAL venue', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE'] },
	},
	'PATCH /api/admin/venues/{venueId}/reject': {
		tag: 'admin', summary: 'Reject a PENDING_APPROVAL venue with a reason', body: 'RejectInput', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE'] },
	},
	'PATCH /api/admin/venues/{venueId}/suspend': {
		tag: 'admin', summary: 'Suspend a venue (ACTIVE, or suspended by its owner)', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE'] },
	},
	'PATCH /api/admin/venues/{venueId}/reactivate': {
		tag: 'admin', summary: 'Reactivate a suspended venue', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE'] },
	},
	'GET /api/admin/resources': {
		tag: 'admin', summary: 'Courts of any venue, oldest first', query: [statusFilter, ...paging],
		ok: { 200: page('Resource') },
	},
	'GET /api/admin/resources/{resourceId}': {
		tag: 'admin', summary: 'A court, whatever its status', ok: { 200: { schema: ref('Resource') } },
		problems: { 404: ['NOT_FOUND'] },
	},
	'PATCH /api/admin/resources/{resourceId}/approve': {
		tag: 'admin', summary: 'Approve a PENDING_APPROVAL court', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE'] },
	},
	'PATCH /api/admin/resources/{resourceId}/reject': {
		tag: 'admin', summary: 'Reject a PENDING_APPROVAL court with a reason', body: 'RejectInput', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE'] },
	},
	'PATCH /api/admin/resources/{resourceId}/suspend': {
		tag: 'admin', summary: 'Suspend a court (ACTIVE, or suspended by its owner)', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE'] },
	},
	'PATCH /api/admin/resources/{resourceId}/reactivate': {
		tag: 'admin', summary: 'Reactivate a suspended court', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE'] },
	},

	// ---- public (public.c) ----
	'GET /api/venues': {
		tag: 'public', summary: 'ACTIVE venues: by name, or nearest first within a radius of a centre',
		query: [
			q('lat', latitude, 'Centre latitude; given with lng.'),
			q('lng', longitude, 'Centre longitude; given with lat.'),
			q('radiusKm', { type: 'number', exclusiveMinimum: 0, maximum: 500, default: 10 }, 'Only with a centre.'),
			...paging,
		],
		ok: { 200: page('Venue') },
	},
	'GET /api/venues/{venueId}': {
		tag: 'public', summary: 'An ACTIVE venue', ok: { 200: { schema: ref('Venue') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'GET /api/venues/{venueId}/resources': {
		tag: 'public', summary: 'The ACTIVE courts of an ACTIVE venue, with schedules, price rules and images',
		ok: { 200: { schema: list('Resource') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'GET /api/resources/{id}/slots': {
		tag: 'public', summary: 'Every slot of a court on a local date, with availability and price',
		query: [q('date', { ...date, description: 'At most 366 days ahead at the venue.' }, 'Local date at the venue.', true)],
		ok: { 200: { schema: list('Slot') }, 304: { description: 'The If-None-Match tag is still the answer.' } },
		etag: true, problems: { 404: ['NOT_FOUND'] },
	},

	// ---- match-making (search.c, requests.c, invitations.c) ----
	'GET /api/match/search': {
		tag: 'match-making', summary: 'Free slots near a point, nearest first, with eligible players nearby',
		description: 'A search of a date within the next two weeks that the same FastCGI process is asked again carries an `ETag` (`Cache-Control: private, no-cache`): sent back in `If-None-Match`, it gets 304 while no booking, venue, court or player around has changed and time has not changed the answer. The first answer, and every answer of plain CGI, carries none.',
		query: [
			q('lat', latitude, 'Latitude of the centre.', true),
			q('lng', longitude, 'Longitude of the centre.', true),
			q('radiusKm', { type: 'number', exclusiveMinimum: 0, maximum: 100, default: 10 }, 'Kilometres.'),
			q('date', { ...date, description: 'At most 366 days ahead.' }, 'YYYY-MM-DD.', true),
			q('startTimeFrom', time, 'Earliest start.', true),
			q('startTimeTo', time, 'Latest start, not before startTimeFrom.', true),
			q('slotDurationMinutes', { type: 'integer', minimum: 15, maximum: 240, default: 90 }, 'Minutes.'),
			q('format', { ...FORMAT, default: 'TWO_VS_TWO' }, 'Match format.'),
			q('skillLevel', { type: 'string', enum: ['ANY', ...SKILL.enum], default: 'ANY' }, 'Skill of the eligible players counted.'),
			q('limit', { type: 'integer', minimum: 1, maximum: 200, default: 50 }, 'Results at most.'),
		],
		ok: { 200: { schema: list('SearchResult') }, 304: { description: 'The If-None-Match tag is still the answer.' } },
		etag: true,
	},
	'GET /api/match/open': {
		tag: 'match-making', summary: 'Open public matches near a point that the caller could join now, soonest first',
		description: 'OPEN, PUBLIC matches that have not started and have a free place: of the caller\'s level when competitive (any level when friendly), not the caller\'s own, not at the time of another match of the caller, not refused by the club\'s booking rules. Sorted by start, then distance.',
		query: [
			q('lat', latitude, 'Latitude of the centre.', true),
			q('lng', longitude, 'Longitude of the centre.', true),
			q('radiusKm', { type: 'number', exclusiveMinimum: 0, maximum: 100, default: 10 }, 'Kilometres.'),
			q('date', date, 'The venue\'s local date of the match.'),
			q('from', time, 'Earliest start.'),
			q('to', time, 'Latest start, not before from.'),
			q('format', FORMAT, 'Match format.'),
			...paging,
		],
		ok: { 200: page('OpenMatch') },
	},
	'POST /api/match/requests/{id}/join': {
		tag: 'match-making', summary: 'Join a public match from the feed, into a team: the rules and payment of joining by link', body: 'TeamInput',
		ok: { 200: { schema: ref('MatchRequest') } },
		problems: {
			404: ['NOT_FOUND'],
			409: ['LEVEL_MISMATCH', 'INVALID_STATE', 'MATCH_NOT_OPEN', 'MATCH_STARTED', 'ALREADY_IN_MATCH', 'TEAM_FULL',
				'OFFER_FOR_OTHER_TEAM', ...BOOKING_RULES],
			503: ['PAYMENT_PROVIDER_UNAVAILABLE'],
		},
	},
	'POST /api/match/requests': {
		tag: 'match-making', summary: 'Open a match request: hold the slot, the caller as organizer, PENDING_PAYMENT',
		body: 'MatchRequestInput', ok: { 201: { schema: ref('MatchRequest') } },
		problems: {
			404: ['NOT_FOUND'],
			409: ['SLOT_NOT_OFFERED', 'SLOT_IN_PAST', 'NOT_BOOKABLE', 'SLOT_TAKEN', 'SLOT_BLOCKED',
				'HOLD_LIMIT', ...BOOKING_RULES],
			503: ['PAYMENT_PROVIDER_UNAVAILABLE'],
		},
	},
	'GET /api/match/requests/my': {
		tag: 'match-making', summary: 'Every match request the caller plays in, coming ones first', query: paging,
		ok: { 200: page('MatchRequest') },
	},
	'GET /api/match/requests/{id}': {
		tag: 'match-making', summary: 'A match request the caller plays in', ok: { 200: { schema: ref('MatchRequest') } },
		problems: { 404: ['NOT_FOUND'] },
	},
	'DELETE /api/match/requests/{id}': {
		tag: 'match-making', summary: 'Cancel a match (organizer only): players told and refunded', ok: { 204: {} },
		problems: { 403: ['NOT_ORGANIZER'], 404: ['NOT_FOUND'], 409: ['INVALID_STATE', 'MATCH_STARTED'] },
	},
	'POST /api/match/requests/{id}/confirm-payment': {
		tag: 'match-making', summary: 'Confirm the organizer\'s payment: OPEN, eligible players invited',
		description: 'With PAYMENT_PROVIDER=stripe this asks the provider now: the organizer\'s PaymentIntent is read, and applied as its webhook event would be; PAYMENT_NOT_RECEIVED while it has not succeeded (or brought another amount). With none it is the organizer\'s word.',
		ok: { 200: { schema: ref('MatchRequest') } },
		problems: { 403: ['NOT_ORGANIZER'], 404: ['NOT_FOUND'], 409: ['PAYMENT_WINDOW_PASSED', 'INVALID_STATE', 'PAYMENT_NOT_RECEIVED'], 503: ['PAYMENT_PROVIDER_UNAVAILABLE'] },
	},
	'POST /api/payments/stripe/webhook': {
		tag: 'payments', summary: 'Stripe\'s events: payments confirmed, failed or cancelled, refunds settled',
		description: 'Give this URL to Stripe as a webhook endpoint. No token: the `Stripe-Signature` header is checked over the body as sent (HMAC-SHA256 with one of STRIPE_WEBHOOK_SECRET\'s secrets, signed at most 300 s ago) before anything reads it. Each event is applied once by its id, in any order and however often it comes.',
		query: [{ name: 'Stripe-Signature', in: 'header', required: true, description: 'Stripe\'s signature: t=<unix time>,v1=<hex HMAC-SHA256 of "t.body">.', schema: { type: 'string' } }],
		body: 'StripeEvent',
		ok: { 200: { schema: ref('WebhookReceipt') } },
		problems: { 400: ['INVALID_SIGNATURE', 'MALFORMED_EVENT'], 404: ['NOT_FOUND'] },
	},
	'DELETE /api/match/requests/{id}/leave': {
		tag: 'match-making', summary: 'Leave a match more than 48 h ahead (refunded), optionally handing the place to a substitute',
		description: 'With a substitutePlayerId, that player gets the freed place first (an invitation of kind HANDOVER, theirs alone for 15 minutes); declined or lapsed, it goes to the waiting list, then to substitute invitations.',
		body: 'HandoverInput', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND', 'SUBSTITUTE_NOT_FOUND'], 409: ['ORGANIZER_CANNOT_LEAVE', 'INVALID_STATE', 'LEAVE_TOO_LATE', 'SUBSTITUTE_UNAVAILABLE'] },
	},
	'POST /api/match/requests/{id}/absence': {
		tag: 'match-making', summary: 'Report absence: out without refund unless the place is taken in time; substitutes invited or one named',
		description: 'With a substitutePlayerId, that player gets the freed place first (an invitation of kind HANDOVER, theirs alone for 15 minutes); declined or lapsed, it goes to the waiting list, then to substitute invitations. When anyone takes and pays the place until 2 hours before the start (match_policy.handover_notice), the caller\'s payment is refunded in full and a late absence costs no reliability; the late penalty waits for that window.',
		body: 'HandoverInput', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND', 'SUBSTITUTE_NOT_FOUND'], 409: ['ORGANIZER_CANNOT_LEAVE', 'INVALID_STATE', 'MATCH_STARTED', 'SUBSTITUTE_UNAVAILABLE'] },
	},
	'POST /api/match/requests/{id}/checkin': {
		tag: 'match-making', summary: 'Check in at the venue by position',
		query: [
			q('lat', latitude, 'Device latitude.', true),
			q('lng', longitude, 'Device longitude.', true),
			q('accuracy', { type: 'number', minimum: 0 }, 'Accuracy of the position, metres.', true),
		],
		ok: { 204: {} },
		problems: {
			404: ['NOT_FOUND'],
			409: ['INVALID_STATE', 'CHECKIN_TOO_EARLY', 'CHECKIN_CLOSED', 'INACCURATE_POSITION', 'TOO_FAR'],
		},
	},
	'POST /api/match/requests/{id}/waitlist': {
		tag: 'match-making', summary: 'Join the waiting list of a full match, for one team or either',
		description: 'A competitive PUBLIC match takes players of its level only (the caller\'s effective level; LEVEL_MISMATCH: ask for a place instead); a PRIVATE match is 404 to anyone not in it. When a place of that team frees (a leave, an absence), the first player on the list who is free at that time (not banned, in no overlapping match) is offered it: an invitation of kind OFFER, theirs alone for 15 minutes (match_policy.offer_window), accepted or declined with the invitation routes; declined or lapsed, it passes to the next. An offered player leaves the list.',
		body: 'WaitlistInput', ok: { 201: { schema: ref('WaitlistEntry') } },
		problems: { 404: ['NOT_FOUND'], 409: ['MATCH_NOT_FULL', 'MATCH_STARTED', 'ALREADY_IN_MATCH', 'ALREADY_WAITING', 'LEVEL_MISMATCH'] },
	},
	'POST /api/match/requests/{id}/place-requests': {
		tag: 'match-making', summary: 'Ask the players of a competitive public match of another level for a place',
		description: 'Every player now in the match is told (PLACE_REQUESTED) and answers with approve or reject. One reject makes it REJECTED (the requester told); once every player now in the match approved, the requester gets an invitation of kind PLACE for a free place of the team asked for, theirs alone for 15 minutes (match_policy.offer_window), or, with no place free (the match may be OPEN or MATCHED), a place on the waiting list; told PLACE_REQUEST_APPROVED. One request per player and match.',
		body: 'PlaceRequestInput', ok: { 201: { schema: ref('PlaceRequest') } },
		problems: {
			404: ['NOT_FOUND'],
			409: ['ALREADY_IN_MATCH', 'MATCH_STARTED', 'MATCH_NOT_OPEN', 'JOIN_INSTEAD', 'PLAYER_BUSY',
				'PLACE_REQUEST_EXISTS', ...BOOKING_RULES],
		},
	},
	'GET /api/match/place-requests': {
		tag: 'match-making', summary: 'The caller\'s place requests, and those of the caller\'s matches waiting for the caller\'s answer, newest first',
		query: paging, ok: { 200: page('PlaceRequest') },
	},
	'GET /api/match/place-requests/{id}': {
		tag: 'match-making', summary: 'A place request: its requester or a player now in its match',
		ok: { 200: { schema: ref('PlaceRequest') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'POST /api/match/place-requests/{id}/approve': {
		tag: 'match-making', summary: 'Approve a place request (a player now in its match); again changes nothing',
		ok: { 200: { schema: ref('PlaceRequest') } },
		problems: { 404: ['NOT_FOUND'], 409: ['PLACE_REQUEST_CLOSED'] },
	},
	'POST /api/match/place-requests/{id}/reject': {
		tag: 'match-making', summary: 'Reject a place request (a player now in its match): REJECTED',
		ok: { 200: { schema: ref('PlaceRequest') } },
		problems: { 404: ['NOT_FOUND'], 409: ['PLACE_REQUEST_CLOSED'] },
	},
	'DELETE /api/match/requests/{id}/waitlist': {
		tag: 'match-making', summary: 'Leave the waiting list of a match', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'] },
	},
	'POST /api/match/series': {
		tag: 'match-making', summary: 'Open a weekly series: the same court and time every week, dates that cannot be booked skipped',
		description: 'Each date is an ordinary match request (PENDING_PAYMENT with its own expiresAt), booked as POST /api/match/requests would book it; a date that booking would refuse with a 409 is listed in skipped with that code instead, and the others are made. The series counts as one hold toward the unpaid-holds limit.',
		body: 'SeriesInput', ok: { 201: { schema: ref('Series') } },
		problems: { 404: ['NOT_FOUND'], 409: ['HOLD_LIMIT', 'NO_BOOKABLE_DATE'], 503: ['PAYMENT_PROVIDER_UNAVAILABLE'] },
	},
	'GET /api/match/series/{id}': {
		tag: 'match-making', summary: 'A series the caller organizes, its match requests as they are now',
		ok: { 200: { schema: ref('Series') } },
		problems: { 404: ['NOT_FOUND'] },
	},
	'DELETE /api/match/series/{id}': {
		tag: 'match-making', summary: 'Cancel a series: its matches still to come cancelled, refunded and told as one cancel each',
		description: 'Matches that have started, are CONFIRMED, over or cancelled already stay as they are; one date alone is cancelled with DELETE /api/match/requests/{id}.',
		ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'] },
	},
	'GET /api/match/invitations': {
		tag: 'match-making', summary: 'The caller\'s pending invitations to open matches, newest first', query: paging,
		ok: { 200: page('Invitation') },
	},
	'POST /api/match/invitations/{id}/accept': {
		tag: 'match-making', summary: 'Accept an invitation into a team (an offer into its own team)', body: 'TeamInput',
		ok: { 200: { schema: ref('MatchRequest') } },
		problems: {
			404: ['NOT_FOUND'],
			409: ['INVALID_STATE', 'MATCH_NOT_OPEN', 'MATCH_STARTED', 'ALREADY_IN_MATCH', 'TEAM_FULL',
				'OFFER_FOR_OTHER_TEAM', ...BOOKING_RULES],
			503: ['PAYMENT_PROVIDER_UNAVAILABLE'],
		},
	},
	'POST /api/match/invitations/{id}/decline': {
		tag: 'match-making', summary: 'Decline an invitation', ok: { 204: {} },
		problems: { 404: ['NOT_FOUND'], 409: ['INVALID_STATE'] },
	},
	'POST /api/match/join/{token}': {
		tag: 'match-making', summary: 'Join a match by its invitation token', body: 'TeamInput',
		ok: { 200: { schema: ref('MatchRequest') } },
		problems: {
			404: ['NOT_FOUND'],
			409: ['INVALID_STATE', 'MATCH_NOT_OPEN', 'MATCH_STARTED', 'ALREADY_IN_MATCH', 'TEAM_FULL',
				'OFFER_FOR_OTHER_TEAM', ...BOOKING_RULES],
			503: ['PAYMENT_PROVIDER_UNAVAILABLE'],
		},
	},

	// ---- players and notifications (players.c) ----
	'GET /api/players/me': {
		tag: 'players', summary: 'The caller\'s player profile (created with defaults if new)',
		ok: { 200: { schema: ref('Player') } },
	},
	'PUT /api/players/me': {
		tag: 'players', summary: 'Replace the editable fields of the caller\'s profile', body: 'PlayerInput',
		ok: { 200: { schema: ref('Player') } },
	},
	'GET /api/notifications': {
		tag: 'notifications', summary: 'The caller\'s notifications, newest first', query: paging,
		ok: { 200: page('Notification') },
	},
	'POST /api/notifications/{id}/read': {
		tag: 'notifications', summary: 'Mark a notification read', ok: { 204: {} }, problems: { 404: ['NOT_FOUND'] },
	},

	'POST /api/match/requests/{id}/result': {
		tag: 'match-making', summary: 'Report the result of a played match (CONFIRMED, or started)',
		description: 'One result per match, PENDING until a player of the other team confirms or disputes it; the sweeper confirms it 48 hours after the end when nobody disputed it. A confirmed result of a competitive match is one Glicko-2 rating period for each of its players.',
		body: 'ResultInput', ok: { 201: { schema: ref('Result') } },
		problems: { 404: ['NOT_FOUND'], 409: ['NO_RESULT_FOR_FORMAT', 'MATCH_NOT_PLAYED', 'RESULT_EXISTS', 'INVALID_RESULT'] },
	},
	'POST /api/match/requests/{id}/result/confirm': {
		tag: 'match-making', summary: 'Confirm the other team\'s result: CONFIRMED, ratings moved once',
		ok: { 200: { schema: ref('Result') } },
		problems: { 403: ['SAME_TEAM'], 404: ['NOT_FOUND', 'RESULT_NOT_FOUND'], 409: ['RESULT_DISPUTED'] },
	},
	'POST /api/match/requests/{id}/result/dispute': {
		tag: 'match-making', summary: 'Dispute the other team\'s result, with a reason',
		body: 'DisputeInput', ok: { 200: { schema: ref('Result') } },
		problems: { 403: ['SAME_TEAM'], 404: ['NOT_FOUND', 'RESULT_NOT_FOUND'], 409: ['RESULT_CONFIRMED'] },
	},
	'GET /api/players/me/results': {
		tag: 'players', summary: 'The results of the caller\'s matches, newest first, with the rating before and after', query: paging,
		ok: { 200: page('PlayerResult') },
	},

	// ---- calendar feeds (players.c, owner.c) ----
	'GET /api/players/me/calendar': {
		tag: 'calendar', summary: 'The URL of the caller\'s calendar feed (made on first use)',
		ok: { 200: { schema: ref('CalendarFeed') } },
	},
	'POST /api/players/me/calendar/rotate': {
		tag: 'calendar', summary: 'A new secret URL for the caller\'s calendar feed; the old one answers 404',
		ok: { 200: { schema: ref('CalendarFeed') } },
	},
	'GET /api/owner/venues/{venueId}/calendar': {
		tag: 'calendar', summary: 'The URL of a venue\'s calendar feed: every court\'s booked time, no players',
		ok: { 200: { schema: ref('CalendarFeed') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'POST /api/owner/venues/{venueId}/calendar/rotate': {
		tag: 'calendar', summary: 'A new secret URL for a venue\'s calendar feed; the old one answers 404',
		ok: { 200: { schema: ref('CalendarFeed') } }, problems: { 404: ['NOT_FOUND'] },
	},
	'GET /api/calendar/{secret}.ics': {
		tag: 'calendar', summary: 'A calendar feed (iCalendar, RFC 5545), reached by its secret URL',
		description: 'For calendar apps, which cannot send a token: the secret is the credential. A player\'s feed has every match they play in, organise or left, of the last 90 days and ahead (STATUS:CANCELLED with a raised SEQUENCE once cancelled, lapsed or left); a venue\'s has its courts\' booked time without players. Times are UTC. Poll with If-None-Match.',
		ok: {
			200: { schema: { type: 'string', description: 'An iCalendar object (VCALENDAR of VEVENTs).' }, type: 'text/calendar' },
			304: { description: 'The If-None-Match tag is still the answer.' },
		},
		etag: true, problems: { 404: ['NOT_FOUND'] },
	},
};
