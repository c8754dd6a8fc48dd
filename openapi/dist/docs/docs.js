// The page of /api/docs: Swagger UI over the document beside it. Both URLs are relative to
// the page (/api/docs), so the page works under any BASE_PATH.
window.ui = SwaggerUIBundle({
	url: 'openapi.json',
	dom_id: '#swagger-ui',
	deepLinking: true,
	docExpansion: 'list',
	defaultModelsExpandDepth: 0,
	validatorUrl: null,
	tryItOutEnabled: false,
});
